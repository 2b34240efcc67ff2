import { mkdir, readFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';
import { join, resolve } from 'node:path';
import { CONFIG_VARIABLES, loadConfig, redisPrefix } from '../config.js';
import { ExitCode, InfrastructureError } from '../errors.js';
import { onPath, redisAnswers, redisInstallHint, startLocalRedis, type LocalRedis } from '../redis/localRedis.js';
import { pino } from 'pino';
import { createLogger } from '../logger.js';
import { samplesDir } from '../paths.js';
import { ended } from '../batches/batchStore.js';
import { openServices } from '../services.js';
import { deleteKeysUnder, redactUrl } from '../redis.js';
import { startSimulator } from '../simulator/index.js';
import { startAccountDelivery, startBusinessDelivery } from '../assembly/startWorkers.js';
import { openLoginPortal } from '../accounts/openLoginPortal.js';
import { importAndFollow, type ImportOutcome } from '../importer/importAndFollow.js';
import { ACCOUNTS } from '../kinds/accounts.js';
import { ORDERS } from '../kinds/orders.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { positiveInteger, type CommandIo } from './options.js';

/** Flags of `bulkorder demo`. */
export interface DemoFlags {
  out?: string;
  keep?: boolean;
  /** Seconds the whole demo may take before it exits 5 naming what it waited for; default 600. */
  maxWait?: string;
}

/** The one setting the demo takes from its environment: where Redis is (a private one when none answers there). */
const KEPT = 'REDIS_URL';

/** The sample files the demo imports, in order; mistakes.csv shows rejects, gift-orders.csv dead letters. */
export const DEMO_FILES = [
  'gift-orders.csv',
  'multi-line-orders.csv',
  'gift-orders.json',
  'gift-orders.ndjson',
  'mistakes.csv',
];

/**
 * `bulkorder demo`: returns the exit code. Hermetic: its own simulator, credentials and Redis
 * namespace whatever the environment or a `.env` says (it names the settings it set aside; only
 * REDIS_URL is taken, and a private Redis is started when none answers there), and a deadline
 * (`--max-wait`) after which it exits 5 naming what it waited for.
 */
export async function runDemo(flags: DemoFlags, io: CommandIo): Promise<number> {
  const say = (line: string) => io.stdout.write(line + '\n');
  const out = resolve(flags.out ?? 'demo-output');
  const maxWaitMs = (flags.maxWait === undefined ? 600 : positiveInteger(flags.maxWait, '--max-wait')) * 1000;
  const deadline = Date.now() + maxWaitMs;
  await mkdir(out, { recursive: true });
  for (const line of await setAside(io.env)) say(line);
  const kept = io.env[KEPT];
  const redis = await demoRedis(loadConfig({ env: kept === undefined ? {} : { [KEPT]: kept } }).redisUrl.reveal(), say);
  try {
    return await runDemoOn(redis?.url, { out, say, io, limit: { deadline, maxWaitMs } });
  } finally {
    await redis?.stop();
  }
}

/**
 * What the demo leaves aside, in words: every bulkorder setting of the environment but REDIS_URL
 * (a real API's URL, credentials, environment, namespace or limits would turn the demo into
 * something else), and a `.env` here, which it never reads.
 */
async function setAside(env: CommandIo['env']): Promise<string[]> {
  const lines: string[] = [];
  const inherited = CONFIG_VARIABLES.filter((name) => name !== KEPT && (env[name] ?? '').trim() !== '');
  if (inherited.length > 0)
    lines.push(
      `the demo uses its own simulator, credentials and Redis namespace: set aside from the environment: ${inherited.join(', ')}`,
    );
  const dotenv = await readFile('.env', 'utf8').catch(() => undefined);
  if (dotenv !== undefined) {
    const named = Object.keys(parseEnv(dotenv)).filter((name) => CONFIG_VARIABLES.includes(name));
    lines.push(
      `./.env is not read by the demo${named.length === 0 ? '' : ` (it sets ${named.join(', ')})`}; bulkorder reads it only when given --config-file .env`,
    );
  }
  return lines;
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

/** When the demo must give up, and how long that was. */
interface DemoDeadline {
  deadline: number;
  maxWaitMs: number;
}

/** One demo run: where its files go, how it speaks, its terminal and its deadline. */
interface DemoRun {
  /** The output directory (results, rejects, the JSON log). */
  out: string;
  /** Writes one line to the terminal. */
  say: (line: string) => void;
  io: CommandIo;
  limit: DemoDeadline;
}

/** The demo's settings: nothing of the environment but where Redis is; every other value is the demo's own or a default. */
function demoConfig(redisUrl: string | undefined, simulatorUrl: string): Config {
  return loadConfig({
    env: {},
    overrides: {
      ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }),
      BULKORDER_ENV: 'acceptance',
      BULKORDER_BASE_URL: simulatorUrl,
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
}

async function runDemoOn(redisUrl: string | undefined, run: DemoRun): Promise<number> {
  const { out, say, io, limit } = run;
  const simulator = await startSimulator({ seed: 7, faults: { latencyMs: 20, jitterMs: 10, serverErrorRate: 0.05 } });
  const config = demoConfig(redisUrl, simulator.url);
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
    // Every target of the demo's namespace (each run's simulator has a new port, so a new target id), wiped
    // before the workers start: wiped after, their heartbeats would be gone and "no worker is running" said.
    await deleteKeysUnder(services.redis, config.redisKeyPrefix);
  } catch (error) {
    await services?.close();
    await simulator.close();
    throw error;
  }
  const workers = [
    await startBusinessDelivery(config, logger, { prefix, delivery: config.delivery, prefetchToken: true }),
    await startAccountDelivery(config, logger, {
      prefix: redisPrefix(config, 'cafetariaplan'),
      delivery: config.delivery,
    }),
  ];
  try {
    say('workers started in this process; importing the sample files from samples/\n');
    let settledAll = true;
    for (const name of DEMO_FILES) {
      const base = name.replace('.', '-'); // gift-orders.csv and gift-orders.json must not share a results file
      const outcome = await importAndFollow(
        join(samplesDir, name),
        { rejectsPath: join(out, `${base}.rejects.csv`) },
        { services, logger },
        {
          wait: true,
          resultsPath: join(out, `${base}.results.csv`),
          timeoutMs: timeLeft(limit, name),
          out: io.stderr,
        },
      );
      say(outcome.report);
      settledAll &&= settledWithin(outcome, name, limit);
    }
    settledAll &&= await demoAccounts(config, logger, run);
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

/** What is left of the demo's time for `step`; none left: DEMO_DEADLINE (exit 5) naming the step. */
function timeLeft(limit: DemoDeadline, step: string): number {
  const left = limit.deadline - Date.now();
  if (left <= 0) throw demoDeadline(limit, `the import of ${step}`, []);
  return left;
}

/**
 * Whether a step's batch ended with every record delivered, dead-lettered or held; a batch the
 * deadline cut short stops the demo (DEMO_DEADLINE, exit 5) with what it waited for.
 */
function settledWithin(outcome: ImportOutcome, step: string, limit: DemoDeadline): boolean {
  if (outcome.exitCode === ExitCode.infrastructure) {
    const why = (outcome.json.gaveUpBecause as string[] | undefined) ?? [];
    throw demoDeadline(limit, `batch ${outcome.result.batchId} of ${step} to settle`, why);
  }
  const batch = outcome.batch;
  return batch !== undefined && ended(batch) >= batch.enqueued;
}

function demoDeadline(limit: DemoDeadline, what: string, why: readonly string[]): InfrastructureError {
  return new InfrastructureError(
    'DEMO_DEADLINE',
    `the demo gave up after ${Math.round(limit.maxWaitMs / 1000)} s (--max-wait) waiting for ${what}${why.length === 0 ? ': its records were still being delivered' : `: ${why.join('; ')}`}. Nothing is lost or sent twice; run it again, or give it longer with --max-wait.`,
    { details: { waitedFor: what, reasons: [...why] } },
  );
}

/** The Cafetariaplan journey: register the sample employees, then hand one of them a one-time login URL. */
async function demoAccounts(config: Config, logger: Logger, run: DemoRun): Promise<boolean> {
  const { out, say, limit } = run;
  const file = join(samplesDir, 'employees.csv');
  const services = await openServices(config, ACCOUNTS);
  let settled: boolean;
  try {
    const outcome = await importAndFollow(
      file,
      { rejectsPath: join(out, 'employees-csv.rejects.csv') },
      { services, logger },
      {
        wait: true,
        resultsPath: join(out, 'employees-csv.results.csv'),
        timeoutMs: timeLeft(limit, 'employees.csv'),
        out: run.io.stderr,
      },
    );
    say(outcome.report);
    settled = settledWithin(outcome, 'employees.csv', limit);
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
