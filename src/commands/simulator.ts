/**
 * `bulkorder simulator`: runs the local stand-in for the remote APIs in the foreground until
 * SIGINT or SIGTERM, and prints the settings a client needs to talk to it.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { ExitCode, UsageError } from '../errors.js';
import { DEFAULT_PORTS, withExamples, type CommandIo } from './options.js';
import { NO_SIGNALS } from './options.js';

/** How long the simulator may take to close its server after SIGTERM/SIGINT. */
const SIMULATOR_GRACE_MS = 10_000;

interface SimulatorFlags {
  port: number;
  host: string;
  latency?: number;
  jitter?: number;
  errorRate?: number;
  storedThenErrorRate?: number;
  unansweredRate?: number;
  rateLimit?: number;
  retryAfter?: number;
  tokenFailureRate?: number;
  tokenLatency?: number;
  tokenLifetime: number;
  seed?: number;
  customers?: number[];
  products?: number[];
  businessClientId?: string;
  businessClientSecret?: string;
  cafetariaplanClientId?: string;
  cafetariaplanClientSecret?: string;
  logLevel: string;
  json?: boolean;
  profile?: string;
}

/** Declares the command; the simulator itself is imported only when it runs. */
export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('simulator')
    .description(
      'Run a local stand-in for the token endpoint, Business API and Cafetariaplan API (with optional faults) until Ctrl+C',
    )
    .option('--port <port>', 'TCP port (0 = any free port)', integer('--port', 0), DEFAULT_PORTS.simulator)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--latency <ms>', 'delay added to every API request', number('--latency'))
    .option('--jitter <ms>', 'extra random delay in [0, ms) per API request', number('--jitter'))
    .option(
      '--error-rate <fraction>',
      'fraction of API requests answered 5xx (500/502/503/504, some with Retry-After, some HTML)',
      fraction('--error-rate'),
    )
    .option(
      '--stored-then-error-rate <fraction>',
      'fraction of API requests stored, then answered 500 (lost acknowledgement)',
      fraction('--stored-then-error-rate'),
    )
    .option(
      '--unanswered-rate <fraction>',
      'fraction of API requests stored and never answered (socket held open)',
      fraction('--unanswered-rate'),
    )
    .option(
      '--rate-limit <perSecond>',
      'global limit of API requests per second; above it 429 + Retry-After (0 = off)',
      number('--rate-limit'),
    )
    .option('--retry-after <seconds>', 'Retry-After on 429 and on 503 answers (default 1)', number('--retry-after'))
    .option(
      '--token-failure-rate <fraction>',
      'fraction of token requests answered 503',
      fraction('--token-failure-rate'),
    )
    .option('--token-latency <ms>', 'delay of every token answer', number('--token-latency'))
    .option('--token-lifetime <seconds>', 'expires_in of issued tokens', integer('--token-lifetime', 1), 3600)
    .option('--seed <n>', 'seed of the fault PRNG (runs are reproducible)', integer('--seed', 0))
    .option(
      '--customers <ids>',
      'known businessCustomerIds, e.g. 1001-1010,2000 (default 1001-1010)',
      idList('--customers'),
    )
    .option('--products <ids>', 'catalogue productIds, e.g. 5001-5050 (default 5001-5050)', idList('--products'))
    .option('--business-client-id <id>', 'Business API client_id (default sim-business)')
    .option('--business-client-secret <secret>', 'Business API client_secret (default sim-business-secret)')
    .option('--cafetariaplan-client-id <id>', 'Cafetariaplan API client_id (default sim-cafetariaplan)')
    .option(
      '--cafetariaplan-client-secret <secret>',
      'Cafetariaplan API client_secret (default sim-cafetariaplan-secret)',
    )
    .option(
      '--profile <name>',
      'answer profile for what the spec leaves open (status codes, id types, field names, error bodies): default, integer-ids, problem-json, oauth-errors, html-errors, bare',
    )
    .option('--log-level <level>', 'pino log level on stderr', 'info')
    .option('--json', 'print one JSON line {url, credentials} instead of the text banner (for scripts)')
    .action(async (flags: SimulatorFlags) => {
      await runSimulator(flags, io);
      io.setExitCode(ExitCode.ok);
    });
  withExamples(
    command,
    [
      `bulkorder simulator --port ${DEFAULT_PORTS.simulator}`,
      'bulkorder simulator --latency 20 --error-rate 0.05 --seed 7',
      'bulkorder simulator --profile problem-json --json',
    ],
    'Admin endpoints (no auth, loopback tool): GET /__admin/counters, GET /__admin/orders, GET|POST /__admin/faults, ' +
      'POST /__admin/revoke-tokens, POST /__admin/reset.',
  );
}

async function runSimulator(flags: SimulatorFlags, io: CommandIo): Promise<void> {
  const [{ startSimulator, DEFAULT_CREDENTIALS }, { createLogger }] = await Promise.all([
    import('../simulator/startSimulator.js'),
    import('../logger.js'),
  ]);
  const logger = createLogger({
    level: flags.logLevel,
    base: { component: 'simulator' },
    ...(io.logDestination === undefined ? {} : { destination: io.logDestination }),
  });
  const credentials = {
    business: {
      clientId: flags.businessClientId ?? DEFAULT_CREDENTIALS.business.clientId,
      clientSecret: flags.businessClientSecret ?? DEFAULT_CREDENTIALS.business.clientSecret,
    },
    cafetariaplan: {
      clientId: flags.cafetariaplanClientId ?? DEFAULT_CREDENTIALS.cafetariaplan.clientId,
      clientSecret: flags.cafetariaplanClientSecret ?? DEFAULT_CREDENTIALS.cafetariaplan.clientSecret,
    },
  };
  const faults = withoutUndefined({
    latencyMs: flags.latency,
    jitterMs: flags.jitter,
    serverErrorRate: flags.errorRate,
    storedThenErrorRate: flags.storedThenErrorRate,
    noAnswerRate: flags.unansweredRate,
    rateLimitPerSecond: flags.rateLimit,
    retryAfterSeconds: flags.retryAfter,
    tokenFailureRate: flags.tokenFailureRate,
    tokenLatencyMs: flags.tokenLatency,
  });
  let simulator;
  try {
    simulator = await startSimulator({
      port: flags.port,
      host: flags.host,
      tokenLifetimeSeconds: flags.tokenLifetime,
      credentials,
      faults,
      logger,
      ...(flags.seed === undefined ? {} : { seed: flags.seed }),
      ...(flags.profile === undefined ? {} : { profile: flags.profile }),
      ...(flags.customers === undefined ? {} : { customers: flags.customers }),
      ...(flags.products === undefined ? {} : { products: flags.products }),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new UsageError(
        'SIMULATOR_LISTEN_FAILED',
        `cannot listen on ${flags.host}:${flags.port} (${code}); choose another --port or --host`,
        { cause: error },
      );
    }
    throw error;
  }
  // Listen for signals before printing: whoever reads the URL may stop us right away.
  const stopped = new Promise<string>((resolve) => (io.stop ?? NO_SIGNALS).graceful(resolve, SIMULATOR_GRACE_MS));
  io.stdout.write(
    flags.json === true
      ? JSON.stringify({ url: simulator.url, credentials }) + '\n'
      : banner(simulator.url, credentials),
  );
  const signal = await stopped;
  const counters = simulator.counters();
  await simulator.close();
  logger.info({ signal, counters }, 'simulator stopped');
  logger.flush();
}

function banner(
  url: string,
  credentials: {
    business: { clientId: string; clientSecret: string };
    cafetariaplan: { clientId: string; clientSecret: string };
  },
): string {
  return [
    `Simulator listening on ${url} (token endpoint, Business API, Cafetariaplan API).`,
    'Point bulkorder at it with these settings (e.g. in a .env file):',
    '',
    `BULKORDER_BASE_URL=${url}`,
    `BULKORDER_AUTH_URL=${url}`,
    `BULKORDER_BUSINESS_CLIENT_ID=${credentials.business.clientId}`,
    `BULKORDER_BUSINESS_CLIENT_SECRET=${credentials.business.clientSecret}`,
    `BULKORDER_CAFETARIAPLAN_CLIENT_ID=${credentials.cafetariaplan.clientId}`,
    `BULKORDER_CAFETARIAPLAN_CLIENT_SECRET=${credentials.cafetariaplan.clientSecret}`,
    '# any <brand>-<CompanyName> value that is not an HTTP library name',
    'BULKORDER_USER_AGENT=Acme-AcmeGifts',
    '',
    `Counters: ${url}/__admin/counters   Orders: ${url}/__admin/orders   Faults: POST ${url}/__admin/faults`,
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

function withoutUndefined<T extends Record<string, unknown>>(
  value: T,
): Partial<{ [K in keyof T]: Exclude<T[K], undefined> }> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<{
    [K in keyof T]: Exclude<T[K], undefined>;
  }>;
}

function number(flag: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0)
      throw new InvalidArgumentError(`${flag} must be a number >= 0.`);
    return parsed;
  };
}

function integer(flag: string, min: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min)
      throw new InvalidArgumentError(`${flag} must be an integer >= ${min}.`);
    return Number(value);
  };
}

function fraction(flag: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (value.trim() === '' || !(parsed >= 0 && parsed <= 1))
      throw new InvalidArgumentError(`${flag} must be a fraction between 0 and 1.`);
    return parsed;
  };
}

/** "1001-1010,2000" -> [1001, ..., 1010, 2000]. */
function idList(flag: string): (value: string) => number[] {
  return (value) => {
    const ids: number[] = [];
    for (const part of value.split(',')) {
      const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
      const from = Number(match?.[1]);
      const to = match?.[2] === undefined ? from : Number(match[2]);
      if (match === null || from <= 0 || to < from || to - from > 100_000) {
        throw new InvalidArgumentError(`${flag} must be a list of positive ids or ranges, e.g. 1001-1010,2000.`);
      }
      for (let id = from; id <= to; id++) ids.push(id);
    }
    return ids;
  };
}
