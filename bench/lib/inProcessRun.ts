import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import type { Config } from '../../src/config/configTypes.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { openServices, type Services } from '../../src/services.js';
import type { OrderPayload } from '../../src/ingest/types.js';

/** What a benchmark that imports and delivers in its own process works with. */
export interface InProcessRun {
  config: Config;
  logger: Logger;
  services: Services<OrderPayload>;
  /** A temp folder for its files; the benchmark removes it. */
  dir: string;
  /** Its Redis key prefix; the benchmark deletes the keys under it. */
  prefix: string;
}

/**
 * The setting of a benchmark run in this process against `simulatorUrl`: its own Redis prefix (`bulkorder-bench-<name>-…`,
 * deleted by the benchmark), the simulator's business client, one worker process, silent logs; `extra` adds or overrides.
 */
export async function openInProcessRun(
  simulatorUrl: string,
  name: string,
  extra: Record<string, string> = {},
): Promise<InProcessRun> {
  const prefix = `bulkorder-bench-${name}-${randomBytes(4).toString('hex')}`;
  const config = loadConfig({
    env: {},
    overrides: {
      BULKORDER_BASE_URL: simulatorUrl,
      BULKORDER_USER_AGENT: `Bench-${name}`,
      BULKORDER_BUSINESS_CLIENT_ID: 'sim-business',
      BULKORDER_BUSINESS_CLIENT_SECRET: 'sim-business-secret',
      BULKORDER_REDIS_PREFIX: prefix,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      BULKORDER_WORKER_PROCESSES: '1',
      LOG_LEVEL: 'silent',
      ...extra,
    },
  });
  const logger = createLogger({ level: 'silent' });
  const services = await openServices(config, ORDERS);
  const dir = await mkdtemp(join(tmpdir(), `bulkorder-${name}-bench-`));
  return { config, logger, services, dir, prefix };
}
