/**
 * The public contract of the simulator: what tests, the demo and benchmarks code against.
 * Re-exported from src/simulator/startSimulator.ts and src/simulator/index.ts.
 */
import type { Logger } from '../logger.js';

/** The two remote APIs; a token is bound to the one it was issued for. */
export type ApiName = 'business' | 'cafetariaplan';

/** Which endpoint a scripted response applies to. */
export type ScriptPath = 'orders' | 'accounts' | 'login' | 'token';

/** Client credentials of one API. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * A forced answer for the next matching request (deterministic tests). Entries are consumed
 * in order; an entry without `path` applies to the next API request (orders, accounts or
 * login, never the token endpoint).
 */
export interface ScriptedResponse {
  /** HTTP status to answer. */
  status: number;
  /** An object is sent as JSON; a string is sent as is (text/html when it starts with `<`, else text/plain). */
  body?: string | object;
  /** Extra response headers, e.g. `{ 'retry-after': '2' }`. */
  headers?: Record<string, string>;
  /** Only the next request to this endpoint takes the entry; default: any API endpoint. */
  path?: ScriptPath;
  /** Run the real handler first (a valid order is stored), then answer this instead. Default false. */
  store?: boolean;
  /** Read the request (and store it when `store`), then never answer; the socket stays open. */
  noAnswer?: boolean;
  /** Wait this long before answering. */
  delayMs?: number;
}

/** Injected faults. Rates are fractions in [0, 1]; the three request fates are exclusive. */
export interface FaultOptions {
  /** Fixed delay added to every API request. Default 0. */
  latencyMs: number;
  /** Extra uniform random delay in [0, jitterMs) per API request. Default 0. */
  jitterMs: number;
  /** Fraction answered 5xx without processing: 500/502/503/504, some with Retry-After, some HTML. Default 0. */
  serverErrorRate: number;
  /** Fraction processed (a valid order is stored) and then answered 500: a lost acknowledgement. Default 0. */
  storedThenErrorRate: number;
  /** Fraction processed (stored when valid) and never answered; the socket is held open. Default 0. */
  noAnswerRate: number;
  /** Global sliding one-second window over API requests; above it 429 + Retry-After. 0 = off (default). */
  rateLimitPerSecond: number;
  /** Retry-After (seconds) on 429 and on the 503s that carry one. Default 1. */
  retryAfterSeconds: number;
  /** Fraction of token requests answered 503 `temporarily_unavailable`. Default 0. */
  tokenFailureRate: number;
  /** Delay before every token endpoint answer. Default 0. */
  tokenLatencyMs: number;
  /** Forced answers for the next requests, consumed in order. Default []. */
  script: ScriptedResponse[];
  /** Business customers refused as `403 {"code":"UNKNOWN_CUSTOMER"}` (an API that says 403, not 422). Default []. */
  forbiddenCustomers: number[];
}

/** Kinds of injected faults, each counted. */
export type FaultKind =
  | 'latency'
  | 'serverError'
  | 'storedThenError'
  | 'noAnswer'
  | 'rateLimited'
  | 'tokenFailure'
  | 'tokenLatency'
  | 'scripted';

/**
 * How the simulator answers where the spec says "not shown"; every dimension one value. Named
 * profiles are in src/simulator/answerProfile.ts (ANSWER_PROFILES).
 */
export interface AnswerProfile {
  /** Status of an order for a businessCustomerId the API does not serve (code CUSTOMER_UNKNOWN). */
  unknownCustomerStatus: 403 | 404 | 422;
  /**
   * Ids the API hands out: `string` (orderId `SIM-7`, customerId a UUID), `integer` (JSON numbers
   * 7 and 100007) or `digits` (strings of digits, "7" and "100007", which only look like numbers).
   */
  ids: 'string' | 'integer' | 'digits';
  /** Where the login answer puts the URL: `{loginUrl}`, `{url}`, or nested under an undocumented name. */
  loginUrl: 'loginUrl' | 'url' | 'nested';
  /** Status of a successful create (orders, accounts); `body: false` answers an order with Location only. */
  success: { status: 200 | 201; body: boolean };
  /**
   * Shape of error bodies: `{code, message, details?}`, OAuth-like `{error, error_description}`,
   * RFC 9457 `application/problem+json` (`type`, `title`, `status`, `detail`; no code), `{errors:[...]}`,
   * an HTML page, or no body at all.
   */
  errors: 'code-message' | 'oauth' | 'problem' | 'errors-array' | 'html' | 'empty';
  /** The refusal of a missing or malformed User-Agent. */
  userAgentRefusal: { status: number; code: string };
  /**
   * `honour`: a create repeated with the same Idempotency-Key gets the first answer again and
   * stores nothing (a "stored, then 500" leaves no duplicate). `ignore`: the header is only counted.
   */
  idempotency: 'ignore' | 'honour';
}

/** Options of {@link startSimulator}; every field is optional. */
export interface SimulatorOptions {
  /** TCP port; default 0 (any free port). */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** `expires_in` of issued tokens, in seconds (a positive integer); default 3600. */
  tokenLifetimeSeconds?: number;
  /** Credentials per API; defaults sim-business / sim-business-secret and sim-cafetariaplan / sim-cafetariaplan-secret. */
  credentials?: { business: ClientCredentials; cafetariaplan: ClientCredentials };
  /** Known businessCustomerIds; default 1001..1010. */
  customers?: number[];
  /** Catalogue productIds; default 5001..5050. */
  products?: number[];
  /** Initial faults; default none. */
  faults?: Partial<FaultOptions>;
  /** Seed of the PRNG behind fault fractions and jitter; default 0x5eed (reproducible). */
  seed?: number;
  /** Logger; default silent. */
  logger?: Logger;
  /** Keep accepted orders for `orders()`; false keeps only counters (long benchmarks). Default true. */
  retainOrders?: boolean;
  /** Lifetime of one-time login codes, seconds; default 300. */
  loginCodeLifetimeSeconds?: number;
  /** Clock in epoch milliseconds (token expiry, login codes, rate window); default Date.now. For tests. */
  clock?: () => number;
  /**
   * How it answers where the spec says "not shown": a name from ANSWER_PROFILES
   * (src/simulator/answerProfile.ts) or dimensions over the default. Default `default`.
   */
  profile?: string | Partial<AnswerProfile>;
}

/** One stored order. */
export interface AcceptedOrder {
  /** `SIM-<n>` (an integer-ids profile answers with n). */
  orderId: string;
  /** The parsed request body. */
  payload: unknown;
  /** The Idempotency-Key header the create carried, if any. */
  idempotencyKey?: string;
  /** ISO timestamp from the simulator's clock. */
  receivedAt: string;
}

/** A snapshot of what the simulator saw. */
export interface SimulatorCounters {
  /** The PRNG seed, to reproduce a run. */
  seed: number;
  /** HTTP requests of any kind except /__admin. */
  requests: number;
  /** Requests routed to each API (orders; accounts and login). */
  apiRequests: Record<ApiName, number>;
  /** Token requests, attributed by client_id; `unknown` when it matched no API. */
  tokenRequests: Record<ApiName | 'unknown', number>;
  /** Tokens issued per API. */
  tokensIssued: Record<ApiName, number>;
  /** Orders stored, including those whose answer was then lost (500 or no answer). */
  ordersAccepted: number;
  /** Orders stored whose canonical payload had been stored before. */
  duplicateOrdersAccepted: number;
  accountsCreated: number;
  /** Creates (orders, accounts) that carried an Idempotency-Key header. */
  idempotencyKeys: number;
  /** Creates answered from an earlier one with the same Idempotency-Key (profiles that honour it); nothing stored. */
  idempotentReplays: number;
  /** Successful login calls (one-time URLs handed out). */
  logins: number;
  /** One-time login URLs redeemed. */
  ssoRedeemed: number;
  /** Error answers by machine code (API codes and OAuth `error` values). */
  errors: Record<string, number>;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** Faults injected, by kind. */
  faults: Record<FaultKind, number>;
  /** API requests in flight now (held sockets included). */
  inFlight: number;
  /** Highest number of API requests in flight at once. */
  peakConcurrency: number;
}

/** A running simulator. */
export interface Simulator {
  /** The answer profile in force. */
  readonly profile: Readonly<AnswerProfile>;
  /** `http://HOST:PORT`; serves as {base_url} and as {auth_url}. */
  readonly url: string;
  /** The credentials it accepts. */
  readonly credentials: { business: ClientCredentials; cafetariaplan: ClientCredentials };
  counters(): SimulatorCounters;
  /** Orders stored, in arrival order (empty when `retainOrders` is false). */
  orders(): AcceptedOrder[];
  /** The faults in force, with what is left of the script. */
  faults(): FaultOptions;
  /** Merges into the current faults; `script` replaces the pending script. Throws UsageError SIMULATOR_FAULTS_INVALID. */
  setFaults(faults: Partial<FaultOptions>): void;
  /** Every token issued so far answers 401 TOKEN_INVALID from now on. */
  revokeTokens(): void;
  /** Clears counters, orders, accounts, login codes, the rate window and the PRNG; keeps tokens and faults. */
  reset(): void;
  /** Stops listening and ends every connection, held (never answered) sockets included. */
  close(): Promise<void>;
}
