/**
 * startSimulator: a real HTTP server (node:http) standing in for the token endpoint, the
 * Business API and the Cafetariaplan API, as strict as production, with injectable faults and
 * counters that tests assert against. See README "Simulator" for every assumption it makes
 * where the spec says "not shown".
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { UsageError } from '../errors.js';
import { silentLogger } from '../logger.js';
import { AccountBook } from './accountBook.js';
import { apiError, writeAnswer } from './answer.js';
import { resolveProfile } from './answerProfile.js';
import { CounterBoard } from './counterBoard.js';
import { FaultPlan } from './faultPlan.js';
import { handleAdmin } from './handleAdmin.js';
import { API_ROUTES, handleApi } from './handleApi.js';
import { handleSso } from './handleSso.js';
import { handleToken } from './handleToken.js';
import { OrderBook } from './orderBook.js';
import type { SimulatorContext } from './simulatorContext.js';
import type { ClientCredentials, Simulator, SimulatorOptions } from './simulatorTypes.js';
import { TokenRegistry } from './tokenRegistry.js';

export type * from './simulatorTypes.js';

/** Credentials the simulator accepts unless told otherwise. */
export const DEFAULT_CREDENTIALS: Readonly<{ business: ClientCredentials; cafetariaplan: ClientCredentials }> =
  Object.freeze({
    business: { clientId: 'sim-business', clientSecret: 'sim-business-secret' },
    cafetariaplan: { clientId: 'sim-cafetariaplan', clientSecret: 'sim-cafetariaplan-secret' },
  });

/** Seed used when none is given, so that runs are reproducible by default. */
const DEFAULT_SEED = 0x5eed;

const SECOND = 1000;

/** Starts a simulator and resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const tokenLifetimeSeconds = options.tokenLifetimeSeconds ?? 3600;
  if (!Number.isInteger(tokenLifetimeSeconds) || tokenLifetimeSeconds <= 0) {
    throw new UsageError(
      'SIMULATOR_OPTION_INVALID',
      'tokenLifetimeSeconds must be a positive integer (expires_in is an integer).',
    );
  }
  const seed = options.seed ?? DEFAULT_SEED;
  const profile = Object.freeze(resolveProfile(options.profile));
  const counters = new CounterBoard(seed);
  const held = new Set<ServerResponse>();
  const ctx: SimulatorContext = {
    url: '',
    credentials: options.credentials ?? DEFAULT_CREDENTIALS,
    tokenLifetimeSeconds,
    loginCodeLifetimeMs: (options.loginCodeLifetimeSeconds ?? 300) * SECOND,
    customers: new Set(options.customers ?? range(1001, 1010)),
    products: new Set(options.products ?? range(5001, 5050)),
    clock: options.clock ?? Date.now,
    logger: options.logger ?? silentLogger(),
    counters,
    faults: new FaultPlan(options.faults, seed, counters),
    tokens: new TokenRegistry(),
    orders: new OrderBook(options.retainOrders ?? true),
    accounts: new AccountBook(profile.ids),
    profile,
    idempotent: new Map(),
    hold(res) {
      held.add(res);
      res.once('close', () => held.delete(res));
    },
  };

  const simulator: Simulator = {
    get url() {
      return ctx.url;
    },
    credentials: ctx.credentials,
    profile,
    counters: () => counters.snapshot(),
    orders: () => ctx.orders.list(),
    faults: () => ctx.faults.faults,
    setFaults: (patch) => ctx.faults.set(patch),
    revokeTokens: () => ctx.tokens.revokeAll(),
    reset() {
      counters.reset();
      ctx.orders.reset();
      ctx.accounts.reset();
      ctx.idempotent.clear();
      ctx.faults.reset();
    },
    close: () => close(server, held),
  };

  const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => {
    dispatch(req, res, ctx, simulator).catch((error: unknown) => {
      ctx.logger.error({ err: error, url: req.url }, 'simulator handler failed');
      writeAnswer(res, apiError(500, 'INTERNAL_ERROR', 'The simulator failed unexpectedly.'), counters);
    });
  });
  const host = options.host ?? '127.0.0.1';
  const port = await listen(server, options.port ?? 0, host);
  ctx.url = `http://${urlHost(host)}:${port}`;
  ctx.logger.info({ url: ctx.url, seed }, 'simulator listening');
  return simulator;
}

function dispatch(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: SimulatorContext,
  simulator: Simulator,
): Promise<void> {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  if (path.startsWith('/__admin/')) return handleAdmin(req, res, simulator, path.slice('/__admin/'.length));
  ctx.counters.request();

  const route = API_ROUTES.get(path);
  if (route !== undefined) {
    if (req.method === 'POST') return handleApi(req, res, ctx, route);
    writeAnswer(
      res,
      apiError(405, 'METHOD_NOT_ALLOWED', `${req.method ?? ''} is not allowed on ${path}; use POST.`, {
        headers: {
          allow: 'POST',
        },
      }),
      ctx.counters,
    );
  } else if (path === '/oauth2/token') {
    return handleToken(req, res, ctx);
  } else if (path.startsWith('/sso/') && path.length > '/sso/'.length) {
    handleSso(req, res, ctx, path.slice('/sso/'.length));
  } else {
    writeAnswer(res, apiError(404, 'NOT_FOUND', `No endpoint at ${path}.`), ctx.counters);
  }
  return Promise.resolve();
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

async function close(server: Server, held: Set<ServerResponse>): Promise<void> {
  for (const res of held) res.destroy();
  held.clear();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Idle keep-alive connections would otherwise keep close() waiting for their timeout.
  server.closeAllConnections();
  await closed;
}

// Wildcard addresses are not reachable as such; the loopback is what a local client uses.
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
