/**
 * A separate worker process for the token-sharing test: once loaded it prints `ready`, reads
 * `<startAt> <count>` (epoch ms, orders) from stdin, posts `count` orders through the real client
 * from then on, token shared through Redis under PREFIX, and prints a JSON tally of outcomes on stdout. Run as
 * `node --import tsx tokenLoopChild.ts`.
 */
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { loadConfig, requireApi } from '../../../src/config.js';
import { createApiTokenProvider } from '../../../src/delivery/apiTokenProvider.js';
import { createBusinessApiClient } from '../../../src/delivery/businessApiClient.js';
import { createHttpTransport } from '../../../src/delivery/httpTransport.js';
import { silentLogger } from '../../../src/logger.js';
import { validOrder } from './apiRig.js';

const config = loadConfig();
const settings = requireApi(config, 'business');
const redis = new Redis(config.redisUrl.reveal(), { maxRetriesPerRequest: null });
const transport = createHttpTransport(config.http);
const logger = silentLogger();
const tokenProvider = createApiTokenProvider(settings, {
  transport,
  logger,
  redis,
  ...(process.env.PREFIX === undefined ? {} : { keyPrefix: process.env.PREFIX }),
});
const client = createBusinessApiClient(settings, { transport, tokenProvider, logger });

// The window is given once every child has loaded: on a loaded machine loading alone can take seconds.
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
const [startAt, count] = (await new Promise<string>((resolve) => lines.once('line', resolve)))
  .split(' ')
  .map(Number) as [number, number];
lines.close();
const tally: Record<string, number> = {};
await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
let sent = 0;
await Promise.all(
  [1, 2, 3, 4].map(async () => {
    while (sent++ < count) {
      const outcome = await client.createOrder(validOrder());
      const key = outcome.kind === 'delivered' ? 'delivered' : `${outcome.kind}:${outcome.code}`;
      tally[key] = (tally[key] ?? 0) + 1;
    }
  }),
);
process.stdout.write(`${JSON.stringify(tally)}\n`);
await transport.close();
redis.disconnect();
