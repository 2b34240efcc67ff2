import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadConfig, redisPrefix } from '../config.js';
import { ExitCode, InfrastructureError } from '../errors.js';
import { onPath, redisAnswers, redisInstallHint, startLocalRedis, type LocalRedis } from '../localRedis.js';
import { pino } from 'pino';
import { createLogger } from '../logger.js';
import { samplesDir } from '../paths.js';
import { openServices } from '../services.js';
import { deleteKeysUnder, redactUrl } from '../redis.js';
import { startSimulator } from '../simulator/index.js';
import { startAccountDelivery, startBusinessDelivery } from '../assembly/startWorkers.js';
import { openLoginPortal } from '../accounts/openLoginPortal.js';
import { importAndFollow } from '../importer/importAndFollow.js';
import { ACCOUNTS } from '../kinds/accounts.js';
import { ORDERS } from '../kinds/orders.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { TextSink } from '../textSink.js';
import type { CommandIo } from './options.js';

/** Flags of `bulkorder demo`. */
export interface DemoFlags {
  out?: string;
  keep?: boolean;
}

/** The sample files the demo imports, in order; mistakes.csv shows rejects, gift-orders.csv dead letters. */
export const DEMO_FILES = [
  'gift-orders.csv',
  'multi-line-orders.csv',
  'gift-orders.json',
  'gift-orders.ndjson',
  'mistakes.csv',
];

/** `bulkorder demo`: returns the exit code. */
export async function runDemo(flags: DemoFlags, io: CommandIo): Promise<number> {
  const say = (line: string) => io.stdout.write(line + '\n');
  const out = resolve(flags.out ?? 'demo-output');
  await mkdir(out, { recursive: true });
  const redis = await demoRedis(loadConfig({ env: io.env }).redisUrl.reveal(), say);
  try {
    return await runDemoOn(redis?.url, out, say, io);
  } finally {
    await redis?.stop();
  }
}

/**
 * The Redis the demo runs on: the configured one when it answers, else a private redis-server
 * started for this run (undefined: the configured one). With neither, names the one command that
 * gets a Redis on this system and ends with exit 5.
 */
async function demoRedis(configuredUrl: string, say: (line: string) => void): Promise<LocalRedis | undefined> {
  if (await redisAnswers(configuredUrl)) return undefined;
  const server = onPath('redis-server');
  if (server === undefined) {
    throw new InfrastructureError(
      'REDIS_UNAVAILABLE',
      `no Redis answers at ${redactUrl(configuredUrl)} and redis-server is not installed. Get one with \`${redisInstallHint()}\` ` +
        '(or set REDIS_URL to a Redis you have), then run the demo again.',
    );
  }
  const local = await startLocalRedis(server);
  say(
    `no Redis answers at ${redactUrl(configuredUrl)}: started a private one for this demo at ${local.url} (stopped at the end)`,
  );
  return local;
}

async function runDemoOn(
  redisUrl: string | undefined,
  out: string,
  say: (line: string) => void,
  io: CommandIo,
): Promise<number> {
  const simulator = await startSimulator({ seed: 7, faults: { latencyMs: 20, jitterMs: 10, serverErrorRate: 0.05 } });
  const config = loadConfig({
    env: io.env,
    overrides: {
      ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }),
      BULKORDER_ENV: 'acceptance',
      BULKORDER_BASE_URL: simulator.url,
      BULKORDER_USER_AGENT: 'Demo-BulkorderDemo',
      BULKORDER_BUSINESS_CLIENT_ID: 'sim-business',
      BULKORDER_BUSINESS_CLIENT_SECRET: 'sim-business-secret',
      BULKORDER_CAFETARIAPLAN_CLIENT_ID: 'sim-cafetariaplan',
      BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 'sim-cafetariaplan-secret',
      BULKORDER_BACKOFF_BASE_MS: '200',
      // The demo's own Redis namespace: wiped at start, never shared with real runs.
      BULKORDER_REDIS_PREFIX: 'bulkorder-demo',
      LOG_LEVEL: 'info',
    },
  });
  // The demo's terminal shows progress and summaries; the JSON log (status and body of every refusal) goes to a file.
  const logPath = join(out, 'demo.log');
  const logger = createLogger({
    level: config.logLevel,
    destination: pino.destination({ dest: logPath, sync: false }),
  });
  const prefix = redisPrefix(config);
  say(
    `simulator (the stand-in for the Business and Cafetariaplan APIs) at ${simulator.url}: 20 ms latency, 5% server errors`,
  );

  let services;
  try {
    services = await openServices(config, ORDERS);
  } catch (error) {
    await simulator.close();
    throw error;
  }
  const workers = [
    await startBusinessDelivery(config, logger, { prefix, delivery: config.delivery }),
    await startAccountDelivery(config, logger, {
      prefix: redisPrefix(config, 'cafetariaplan'),
      delivery: config.delivery,
    }),
  ];
  try {
    // Every target of the demo's namespace: each run's simulator has a new port, so a new target id.
    await deleteKeysUnder(services.redis, config.redisKeyPrefix);
    say('workers started in this process; importing the sample files from samples/\n');
    let settledAll = true;
    for (const name of DEMO_FILES) {
      const base = name.replace('.', '-'); // gift-orders.csv and gift-orders.json must not share a results file
      const outcome = await importAndFollow(
        join(samplesDir, name),
        { rejectsPath: join(out, `${base}.rejects.csv`) },
        services,
        logger,
        { wait: true, resultsPath: join(out, `${base}.results.csv`), timeoutMs: 120_000, out: io.stderr },
      );
      settledAll &&=
        outcome.batch !== undefined &&
        outcome.batch.delivered + outcome.batch.dead + outcome.batch.held >= outcome.batch.enqueued;
      say(outcome.report);
    }
    settledAll &&= await demoAccounts(config, logger, out, say, io.stderr);
    const counters = simulator.counters();
    say(
      `simulator saw: ${counters.ordersAccepted} orders accepted, ${counters.duplicateOrdersAccepted} duplicates, ` +
        `${counters.accountsCreated} accounts created, ${counters.logins} login URL(s), token requests ${counters.tokenRequests.business} ` +
        `(business) + ${counters.tokenRequests.cafetariaplan} (cafetariaplan), faults injected: ${JSON.stringify(counters.faults)}`,
    );
    say(
      `\nresults and rejects are in ${out}/, the JSON log (every refusal with its HTTP status and body) in ${logPath}`,
    );
    return settledAll && counters.duplicateOrdersAccepted === 0 ? ExitCode.ok : ExitCode.needsAttention;
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await services.close();
    await simulator.close();
    logger.flush();
  }
}

/** The Cafetariaplan journey: register the sample employees, then hand one of them a one-time login URL. */
async function demoAccounts(
  config: Config,
  logger: Logger,
  out: string,
  say: (line: string) => void,
  progress: TextSink,
): Promise<boolean> {
  const file = join(samplesDir, 'employees.csv');
  const services = await openServices(config, ACCOUNTS);
  let settled: boolean;
  try {
    const outcome = await importAndFollow(
      file,
      { rejectsPath: join(out, 'employees-csv.rejects.csv') },
      services,
      logger,
      { wait: true, resultsPath: join(out, 'employees-csv.results.csv'), timeoutMs: 120_000, out: progress },
    );
    say(outcome.report);
    settled =
      outcome.batch !== undefined &&
      outcome.batch.delivered + outcome.batch.dead + outcome.batch.held >= outcome.batch.enqueued;
  } finally {
    await services.close();
  }
  const portal = await openLoginPortal(config, logger);
  try {
    const [, first] = (await readFile(file, 'utf8')).split(/\r?\n/);
    const [email, , , , companyId] = (first ?? '').split(',');
    const url = await portal.loginUrlFor({ email: email ?? '', companyId: companyId ?? '' });
    say(`one-time login URL for ${email} (what \`bulkorder login --email ... --company ...\` prints):\n  ${url}\n`);
  } finally {
    await portal.close();
  }
  return settled;
}
