/**
 * The only module that reads the environment (STYLE habit 2). Order of precedence:
 * `--config-file` value > inherited environment variable > default: the file is the deliberate
 * choice, the environment is whatever the shell happened to export (an exported
 * `BULKORDER_ENV=acceptance` must never turn a production file into an acceptance run). Where the
 * file overrides a different inherited value, the variable is listed in `Config.shadowed` and the
 * start banner says so. Parsed once with zod into a frozen {@link Config}, with where each value
 * came from ({@link ConfigSource}); every refusal is a {@link ConfigError} (exit 2) naming the variable.
 *
 * `loadConfig` checks only what is present, so commands that need no API (`validate`) work
 * without credentials; `requireApi` then demands what one API needs. To add a setting, add
 * one line to `schema` (with its default and a `.describe()` line) and map it in `toConfig`;
 * .env.example must document it (a test checks that).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { inspect, parseEnv } from 'node:util';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import type { Logger } from './logger.js';
import { AUTO, hostListProblem, splitHostList, targetId, targetMismatch, type HostRules } from './target.js';
import type { DeliverySettings } from './deliverySettings.js';

const SECOND = 1000;

export type Environment = 'acceptance' | 'production';
export type ApiName = 'business' | 'cafetariaplan';
export type TokenAuthMethod = 'body' | 'basic';

/** A secret that prints as `[redacted]` in logs, JSON and util.inspect; `reveal()` only where it is sent. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return '[redacted]';
  }
}

/**
 * A URL whose password is a secret (REDIS_URL): printed, logged or serialised it shows the URL
 * with the password replaced (`redis://user:***@host:6379`), so the host stays visible to whoever
 * reads `bulkorder config` or an error; `reveal()` is for the one place a connection is made.
 */
export class SecretUrl extends Secret {
  readonly #shown: string;
  constructor(value: string) {
    super(value);
    this.#shown = maskPassword(value);
  }
  override toString(): string {
    return this.#shown;
  }
  override toJSON(): string {
    return this.#shown;
  }
  override [inspect.custom](): string {
    return this.#shown;
  }
}

/** A URL with any password replaced, fit for messages and logs. */
export function maskPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** HTTP limits for every remote call; undici's own defaults (5 minutes) are far too long for a batch. */
export interface HttpSettings {
  /** TCP + TLS connect; default 10 s. */
  readonly connectTimeoutMs: number;
  /** From request written to response headers; default 30 s. */
  readonly headersTimeoutMs: number;
  /** Longest silence between body chunks; default 30 s. */
  readonly bodyTimeoutMs: number;
  /** Whole exchange, queueing in the pool included; default 60 s. */
  readonly deadlineMs: number;
}

/**
 * Names of response fields the spec leaves "not shown"; each list is tried in order, and a
 * dotted name (`error.code`) reaches into nested objects.
 */
export interface ResponseFieldSettings {
  readonly errorCode: readonly string[];
  readonly errorMessage: readonly string[];
  readonly remoteId: readonly string[];
  readonly customerId: readonly string[];
  readonly loginUrl: readonly string[];
}

export interface ApiCredentials {
  readonly clientId: string;
  readonly clientSecret: Secret;
}

/** Where a variable's value came from: the demo's or a test's overrides, the `--env-file`, the inherited environment, or the default. */
export type ConfigSource = 'override' | 'env-file' | 'environment' | 'default';

export interface Config {
  readonly env: Environment;
  /** True when production was chosen explicitly (BULKORDER_CONFIRM_PRODUCTION=yes or `--production`). */
  readonly productionConfirmed: boolean;
  /** {base_url} without trailing slash; undefined until an API command needs it. */
  readonly baseUrl: string | undefined;
  /** {auth_url}; defaults to baseUrl. */
  readonly authUrl: string | undefined;
  readonly userAgent: string | undefined;
  readonly credentials: { readonly business?: ApiCredentials; readonly cafetariaplan?: ApiCredentials };
  /** REDIS_URL: masked wherever it is printed; `reveal()` where a connection is made (src/redis.ts). */
  readonly redisUrl: SecretUrl;
  /**
   * Seed nodes of a Redis Cluster (BULKORDER_REDIS_CLUSTER_NODES, `host:port,...`); empty for one Redis
   * at redisUrl. With a cluster every key prefix carries a hash tag (`redisPrefix`), so each
   * environment and record kind lives in one slot and its scripts and transactions stay valid.
   */
  readonly redisClusterNodes: readonly RedisNode[];
  /** Worker processes `bulkorder worker` runs (BULKORDER_WORKER_PROCESSES): `auto` (one per core, the default) or a count. */
  readonly workerProcesses: 'auto' | number;
  /** First part of every Redis key (BULKORDER_REDIS_PREFIX, default `bulkorder`); the environment follows it. */
  readonly redisKeyPrefix: string;
  readonly logLevel: string;
  /** `auto` (default): readable lines on a terminal, JSON when piped; `--log-format` overrides. */
  readonly logFormat: 'auto' | 'json' | 'pretty';
  readonly tokenAuth: TokenAuthMethod;
  readonly http: HttpSettings;
  readonly responseFields: ResponseFieldSettings;
  /** Statuses answered after the server may have stored the request (BULKORDER_AMBIGUOUS_STATUSES); default none. */
  readonly ambiguousStatuses: readonly number[];
  /**
   * Header that carries a record's stable key on every create (BULKORDER_IDEMPOTENCY_HEADER,
   * default `Idempotency-Key`); undefined when turned off (`none`).
   */
  readonly idempotencyHeader: string | undefined;
  /** Queue, retry and ledger settings of delivery workers and imports. */
  readonly delivery: DeliverySettings;
  /** Host patterns that tell production from acceptance URLs (src/target.ts). */
  readonly hostRules: HostRules;
  /** BULKORDER_ALLOW_VOLATILE_REDIS=yes: production may run on a Redis without persistence. */
  readonly allowVolatileRedis: boolean;
  /** The `--env-file` read, if any. */
  readonly envFile: string | undefined;
  /** Where each variable's value came from. */
  readonly sources: Readonly<Record<string, ConfigSource>>;
  /** Variables the env-file set while the inherited environment held another value (the file won). */
  readonly shadowed: readonly string[];
  /** Every variable's effective value as text, secrets masked: what `bulkorder config` prints. */
  readonly effective: Readonly<Record<string, string>>;
  /** `bulkorder dashboard` (src/dashboard). */
  readonly dashboard: DashboardSettings;
  /** Notifications (src/notify): webhooks and e-mail. */
  readonly notify: NotifySettings;
}

export interface DashboardSettings {
  /** Bearer token, or basic-auth password, that actions need (BULKORDER_DASHBOARD_TOKEN); without it the dashboard is read-only. */
  readonly token: Secret | undefined;
  /** The largest file the dashboard's upload page takes (BULKORDER_UPLOAD_MAX_BYTES); default 200 MB. */
  readonly uploadMaxBytes: number;
  /** Where people reach the dashboard (BULKORDER_DASHBOARD_URL), for links in notifications; its host is answered. */
  readonly publicUrl: string | undefined;
  /** Host names the dashboard answers to besides loopback and publicUrl's (BULKORDER_DASHBOARD_HOSTS; `*` any). */
  readonly hosts: readonly string[];
}

export interface SmtpSettings {
  readonly host: string;
  /** Default 587 (STARTTLS when the server offers it); 465 with `secure`. */
  readonly port: number;
  readonly secure: boolean;
  readonly user: string | undefined;
  readonly password: Secret | undefined;
  readonly from: string;
  readonly to: readonly string[];
}

export interface NotifySettings {
  /** Webhook URLs (BULKORDER_NOTIFY_URLS); secrets themselves, since Slack and Teams put a token in the path. */
  readonly urls: readonly Secret[];
  /** One POST's deadline; default 5 s. */
  readonly timeoutMs: number;
  /** E-mail, when BULKORDER_NOTIFY_SMTP_HOST is set. */
  readonly smtp: SmtpSettings | undefined;
}

/** Everything one API client needs, all present and checked. */
export interface ApiSettings {
  readonly api: ApiName;
  readonly env: Environment;
  /** `{base_url}/business-api` or `{base_url}/cafetariaplan-api`. */
  readonly apiBaseUrl: string;
  /** `{auth_url}/oauth2/token`. */
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: Secret;
  readonly userAgent: string;
  readonly tokenAuth: TokenAuthMethod;
  readonly http: HttpSettings;
  readonly responseFields: ResponseFieldSettings;
  /** Statuses answered after the server may have stored the request (BULKORDER_AMBIGUOUS_STATUSES); default none. */
  readonly ambiguousStatuses: readonly number[];
  /** Header for the record's key on creates (Idempotency-Key); undefined when turned off. */
  readonly idempotencyHeader: string | undefined;
}

// Library and tool names a User-Agent must not claim to be: the API identifies the client company by it.
const LIBRARY_BRANDS = new Set(['node', 'nodejs', 'undici', 'axios', 'got', 'fetch', 'nodefetch', 'curl', 'wget', 'python', 'requests', 'okhttp', 'java', 'go', 'postman', 'insomnia', 'httpie', 'mozilla', 'bulkorder', 'brand']);
const USER_AGENT_FORMAT = /^[A-Za-z0-9]+-[A-Za-z0-9][A-Za-z0-9._-]*$/;

const milliseconds = (fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number of milliseconds')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be at least 1').max(3600 * SECOND, 'must be at most 3600000 (one hour)'))
    .default(fallback);
const count = (fallback: number, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .default(fallback);
const fieldList = (fallback: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_.]+(,[A-Za-z0-9_.]+)*$/, 'must be a comma-separated list of field names (a.b for nested)')
    .default(fallback)
    .transform((value) => value.split(','));
const url = z.string().transform((value, ctx) => {
  const problem = urlProblem(value);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  return value.replace(/\/+$/, '');
});
const hostList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const problem = hostListProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      return splitHostList(value);
    });
const clientId = z.string().regex(/^[\x21-\x7e]{1,200}$/, 'must be 1-200 visible ASCII characters');
const clientSecret = z.string().max(1000, 'is longer than 1000 characters').transform((value) => new Secret(value));

const schema = z.object({
  BULKORDER_ENV: z.enum(['acceptance', 'production'], { error: 'must be acceptance or production' }).default('acceptance'),
  BULKORDER_CONFIRM_PRODUCTION: z.enum(['yes', 'no'], { error: 'must be yes or no' }).default('no'),
  BULKORDER_BASE_URL: url.optional(),
  BULKORDER_AUTH_URL: url.optional(),
  BULKORDER_USER_AGENT: z.string().transform((value, ctx) => {
    const problem = userAgentProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    return value;
  }).optional(),
  BULKORDER_BUSINESS_CLIENT_ID: clientId.optional(),
  BULKORDER_BUSINESS_CLIENT_SECRET: clientSecret.optional(),
  BULKORDER_CAFETARIAPLAN_CLIENT_ID: clientId.optional(),
  BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: clientSecret.optional(),
  BULKORDER_PRODUCTION_HOSTS: hostList('none'),
  BULKORDER_ACCEPTANCE_HOSTS: hostList(AUTO),
  BULKORDER_ALLOW_VOLATILE_REDIS: z.enum(['yes', 'no'], { error: 'must be yes or no' }).default('no'),
  BULKORDER_PARKED_RETENTION_DAYS: count(30, 1, 3650),
  BULKORDER_REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, _ . or -').default('bulkorder'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL')
    .default('redis://127.0.0.1:6379')
    .transform((url) => new SecretUrl(url)),
  BULKORDER_REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^$|^[A-Za-z0-9_.-]+:\d{1,5}(,[A-Za-z0-9_.-]+:\d{1,5})*$/, 'must be a comma-separated list of host:port, e.g. 10.0.0.1:7000,10.0.0.2:7000')
    .default('')
    .transform((value) => (value === '' ? [] : value.split(',').map(redisNode))),
  BULKORDER_WORKER_PROCESSES: z
    .string()
    .regex(/^(auto|[1-9]\d{0,2})$/, "must be 'auto' (one per core) or a whole number from 1 to 999")
    .default('auto')
    .transform((value) => (value === 'auto' ? ('auto' as const) : Number(value))),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { error: 'must be one of fatal, error, warn, info, debug, trace, silent' }).default('info'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty'], { error: 'must be auto, json or pretty' }).default('auto'),
  BULKORDER_TOKEN_AUTH: z.enum(['body', 'basic'], { error: 'must be body or basic' }).default('body'),
  BULKORDER_HTTP_CONNECT_TIMEOUT_MS: milliseconds(10 * SECOND),
  BULKORDER_HTTP_HEADERS_TIMEOUT_MS: milliseconds(30 * SECOND),
  BULKORDER_HTTP_BODY_TIMEOUT_MS: milliseconds(30 * SECOND),
  BULKORDER_HTTP_DEADLINE_MS: milliseconds(60 * SECOND),
  BULKORDER_AMBIGUOUS_STATUSES: z
    .string()
    .regex(/^(none|[1-5]\d\d(,[1-5]\d\d)*)$/, "must be 'none' or a comma-separated list of HTTP statuses, e.g. 500,504")
    .default('none')
    .transform((value) => (value === 'none' ? [] : value.split(',').map(Number))),
  // `none`, not an empty value, turns it off: an empty value means "not set" (the default) everywhere.
  BULKORDER_IDEMPOTENCY_HEADER: z
    .string()
    .regex(/^(none|[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64})$/, "must be 'none' or an HTTP header name, e.g. Idempotency-Key")
    .default('Idempotency-Key')
    .transform((value) => (value === 'none' ? undefined : value)),
  BULKORDER_CONCURRENCY: count(20, 1, 1000),
  BULKORDER_ORDERS_PER_JOB: count(10, 1, 100),
  BULKORDER_ATTEMPTS: count(21, 1, 100),
  BULKORDER_BACKOFF_BASE_MS: milliseconds(2 * SECOND),
  BULKORDER_BACKOFF_MAX_MS: milliseconds(600 * SECOND),
  BULKORDER_MAX_RPS: count(0, 0, 100_000),
  BULKORDER_RATE_FLOOR: count(1, 1, 100_000),
  BULKORDER_RATE_DECREASE_PERCENT: count(10, 1, 90),
  BULKORDER_RATE_INCREASE: count(2, 1, 100_000),
  BULKORDER_AMBIGUOUS: z.enum(['hold', 'resend'], { error: 'must be hold or resend' }).default('hold'),
  BULKORDER_LEDGER_RETENTION_DAYS: count(90, 1, 3650),
  BULKORDER_ACCOUNT_RETENTION_DAYS: count(3650, 1, 36500),
  BULKORDER_BREAKER_WINDOW_MS: milliseconds(60 * SECOND),
  BULKORDER_BREAKER_MIN_ATTEMPTS: count(20, 1, 1_000_000),
  BULKORDER_BREAKER_MIN_ORDERS: count(10, 1, 1_000_000),
  BULKORDER_BREAKER_MIN_CUSTOMERS: count(3, 1, 1_000_000),
  BULKORDER_BREAKER_REFUSAL_PERCENT: count(90, 1, 100),
  BULKORDER_BREAKER_SERVER_FAILING_PERCENT: count(50, 1, 100),
  BULKORDER_BREAKER_UNREACHABLE_PERCENT: count(50, 1, 100),
  BULKORDER_BREAKER_CREDENTIALS_MIN_ATTEMPTS: count(3, 1, 1_000_000),
  BULKORDER_BREAKER_OPEN_MS: milliseconds(30 * SECOND),
  BULKORDER_BREAKER_MAX_OPEN_MS: milliseconds(600 * SECOND),
  BULKORDER_BREAKER_TRIAL_CALLS: count(3, 1, 1000),
  BULKORDER_BREAKER_ALERT_AFTER_MS: milliseconds(1800 * SECOND),
  BULKORDER_SHUTDOWN_GRACE_MS: milliseconds(30 * SECOND),
  BULKORDER_STALLED_INTERVAL_MS: milliseconds(30 * SECOND),
  BULKORDER_DASHBOARD_TOKEN: z.string().min(16, 'must be at least 16 characters (e.g. openssl rand -hex 24)').max(1000, 'is longer than 1000 characters').transform((value) => new Secret(value)).optional(),
  BULKORDER_UPLOAD_MAX_BYTES: count(200 * 1024 * 1024, 1, 64 * 1024 * 1024 * 1024),
  BULKORDER_DASHBOARD_URL: z.string().url('must be a URL, e.g. https://bulkorder.example.com').transform((value) => value.replace(/\/+$/, '')).optional(),
  BULKORDER_DASHBOARD_HOSTS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== ''))
    .pipe(z.array(z.string().regex(/^(\*|(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/, 'must be host names (dash.example.com), *.domain, [IPv6] or *, comma-separated'))),
  BULKORDER_NOTIFY_URLS: z.string().transform((value, ctx) => {
    const urls = value.split(',').map((u) => u.trim()).filter((u) => u !== '');
    for (const [i, u] of urls.entries()) {
      // A `slack:`, `teams:` or `json:` before the URL picks the payload (src/notify/webhookPayload.ts); Teams workflow URLs carry their signature in the query.
      const problem = urlProblem(u.replace(/^(slack|teams|json):(?=https?:\/\/)/i, ''), { allowQuery: true });
      // The URL itself is not echoed: webhook URLs carry their secret in the path.
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `URL ${i + 1} ${problem}` });
    }
    return urls.map((u) => new Secret(u));
  }).optional(),
  BULKORDER_NOTIFY_TIMEOUT_MS: milliseconds(5 * SECOND),
  BULKORDER_NOTIFY_SMTP_HOST: z.string().regex(/^[A-Za-z0-9.:[\]-]{1,253}$/, 'must be a host name or address').optional(),
  BULKORDER_NOTIFY_SMTP_PORT: count(587, 1, 65535),
  BULKORDER_NOTIFY_SMTP_SECURE: z.enum(['yes', 'no'], { error: 'must be yes (TLS from the start, port 465) or no (STARTTLS when offered)' }).default('no'),
  BULKORDER_NOTIFY_SMTP_USER: z.string().max(200).optional(),
  BULKORDER_NOTIFY_SMTP_PASSWORD: clientSecret.optional(),
  BULKORDER_NOTIFY_SMTP_FROM: z.string().email('must be an e-mail address').optional(),
  BULKORDER_NOTIFY_SMTP_TO: z
    .string()
    .transform((value) => value.split(',').map((a) => a.trim()).filter((a) => a !== ''))
    .pipe(z.array(z.string().email('must be a comma-separated list of e-mail addresses')).min(1, 'must name at least one address'))
    .optional(),
  BULKORDER_ERROR_CODE_FIELDS: fieldList('code,errorCode,error_code,error.code,error,errors.0.code'),
  BULKORDER_ERROR_MESSAGE_FIELDS: fieldList('message,error_description,detail,error.message,errors.0.message,errors.0.detail,title'),
  BULKORDER_REMOTE_ID_FIELDS: fieldList('orderId,id,orderNumber,order.id,data.orderId,data.id'),
  BULKORDER_CUSTOMER_ID_FIELDS: fieldList('customerId,id,customer.id,data.customerId'),
  BULKORDER_LOGIN_URL_FIELDS: fieldList('loginUrl,url,redirectUrl,loginURL,data.loginUrl'),
});

/** Every variable this module reads (the .env.example test checks each is documented). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

export interface LoadConfigOptions {
  /** The environment to read; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A dotenv file (node's `util.parseEnv` syntax); its values sit below real environment variables. */
  envFile?: string;
  /** The flag that named envFile, for the error when it cannot be read; default `--env-file`. */
  envFileFlag?: string;
  /** Values that win over the environment and the file (the demo points the config at its simulator). */
  overrides?: Readonly<Record<string, string>>;
  /** `--production`: the explicit choice production requires (same as BULKORDER_CONFIRM_PRODUCTION=yes). */
  confirmProduction?: boolean;
}

/** Parses and checks the variables that are present, fills defaults, and returns a frozen Config. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const fromFile = options.envFile === undefined ? {} : readEnvFile(options.envFile, options.envFileFlag ?? '--env-file');
  const real = options.env ?? process.env;
  const raw: Record<string, string> = {};
  const sources: Record<string, ConfigSource> = {};
  const shadowed: string[] = [];
  for (const name of CONFIG_VARIABLES) {
    // An empty value (`VAR=` in a file) means "not set", as most dotenv users expect.
    const [override, file, inherited] = [nonEmpty(options.overrides?.[name]), nonEmpty(fromFile[name]), nonEmpty(real[name])];
    const [value, source]: [string | undefined, ConfigSource] =
      override !== undefined ? [override, 'override'] : file !== undefined ? [file, 'env-file'] : inherited !== undefined ? [inherited, 'environment'] : [undefined, 'default'];
    if (source === 'env-file' && inherited !== undefined && inherited !== file) shadowed.push(name);
    sources[name] = source;
    if (value !== undefined) raw[name] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? 'configuration'), issue?.message ?? 'invalid');
  }
  const config = toConfig(parsed.data, options.confirmProduction === true, { envFile: options.envFile, sources, shadowed, effective: effectiveValues(parsed.data) });
  assertTargetAgrees(config);
  return deepFreeze(config);
}

/** Each variable's parsed value as text, secrets masked. */
function effectiveValues(parsed: Parsed): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of CONFIG_VARIABLES) {
    const value: unknown = parsed[name as keyof Parsed];
    out[name] = value === undefined ? '' : value instanceof SecretUrl ? value.toString() : value instanceof Secret ? '********' : Array.isArray(value) ? (value.length === 0 ? 'none' : value.join(',')) : String(value);
  }
  return out;
}

type Parsed = z.infer<typeof schema>;

type Provenance = Pick<Config, 'envFile' | 'sources' | 'shadowed' | 'effective'>;

function toConfig(v: Parsed, flagConfirmed: boolean, provenance: Provenance): Config {
  if (flagConfirmed && v.BULKORDER_ENV !== 'production') {
    throw new ConfigError('BULKORDER_ENV', '--production was given but BULKORDER_ENV is not production');
  }
  const productionConfirmed = v.BULKORDER_ENV === 'production' && (flagConfirmed || v.BULKORDER_CONFIRM_PRODUCTION === 'yes');
  if (v.BULKORDER_ENV === 'production') {
    if (!productionConfirmed) {
      throw new ConfigError('BULKORDER_CONFIRM_PRODUCTION', 'production sends real orders and customer e-mail: set BULKORDER_CONFIRM_PRODUCTION=yes or pass --production');
    }
    for (const name of ['BULKORDER_BASE_URL', 'BULKORDER_AUTH_URL'] as const) {
      const value = v[name];
      if (value !== undefined && !value.startsWith('https://')) throw new ConfigError(name, 'production accepts https:// URLs only');
    }
  }
  return {
    ...provenance,
    hostRules: { production: v.BULKORDER_PRODUCTION_HOSTS, acceptance: v.BULKORDER_ACCEPTANCE_HOSTS },
    allowVolatileRedis: v.BULKORDER_ALLOW_VOLATILE_REDIS === 'yes',
    env: v.BULKORDER_ENV,
    productionConfirmed,
    baseUrl: v.BULKORDER_BASE_URL,
    authUrl: v.BULKORDER_AUTH_URL ?? v.BULKORDER_BASE_URL,
    userAgent: v.BULKORDER_USER_AGENT,
    credentials: {
      ...credentialPair('BUSINESS', v.BULKORDER_BUSINESS_CLIENT_ID, v.BULKORDER_BUSINESS_CLIENT_SECRET, 'business'),
      ...credentialPair('CAFETARIAPLAN', v.BULKORDER_CAFETARIAPLAN_CLIENT_ID, v.BULKORDER_CAFETARIAPLAN_CLIENT_SECRET, 'cafetariaplan'),
    },
    redisUrl: v.REDIS_URL,
    redisClusterNodes: v.BULKORDER_REDIS_CLUSTER_NODES,
    workerProcesses: v.BULKORDER_WORKER_PROCESSES,
    redisKeyPrefix: v.BULKORDER_REDIS_PREFIX,
    logLevel: v.LOG_LEVEL,
    logFormat: v.LOG_FORMAT,
    tokenAuth: v.BULKORDER_TOKEN_AUTH,
    http: {
      connectTimeoutMs: v.BULKORDER_HTTP_CONNECT_TIMEOUT_MS,
      headersTimeoutMs: v.BULKORDER_HTTP_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: v.BULKORDER_HTTP_BODY_TIMEOUT_MS,
      deadlineMs: v.BULKORDER_HTTP_DEADLINE_MS,
    },
    ambiguousStatuses: v.BULKORDER_AMBIGUOUS_STATUSES,
    idempotencyHeader: v.BULKORDER_IDEMPOTENCY_HEADER,
    responseFields: {
      errorCode: v.BULKORDER_ERROR_CODE_FIELDS,
      errorMessage: v.BULKORDER_ERROR_MESSAGE_FIELDS,
      remoteId: v.BULKORDER_REMOTE_ID_FIELDS,
      customerId: v.BULKORDER_CUSTOMER_ID_FIELDS,
      loginUrl: v.BULKORDER_LOGIN_URL_FIELDS,
    },
    delivery: {
      concurrency: v.BULKORDER_CONCURRENCY,
      ordersPerJob: v.BULKORDER_ORDERS_PER_JOB,
      attempts: v.BULKORDER_ATTEMPTS,
      backoff: { baseMs: v.BULKORDER_BACKOFF_BASE_MS, maxMs: v.BULKORDER_BACKOFF_MAX_MS },
      maxRequestsPerSecond: v.BULKORDER_MAX_RPS,
      rate: { floorPerSecond: v.BULKORDER_RATE_FLOOR, decrease: v.BULKORDER_RATE_DECREASE_PERCENT / 100, increasePerSecond: v.BULKORDER_RATE_INCREASE },
      ambiguousPolicy: v.BULKORDER_AMBIGUOUS,
      ledgerRetentionMs: v.BULKORDER_LEDGER_RETENTION_DAYS * 24 * 3600 * SECOND,
      accountRetentionMs: v.BULKORDER_ACCOUNT_RETENTION_DAYS * 24 * 3600 * SECOND,
      parkedRetentionMs: v.BULKORDER_PARKED_RETENTION_DAYS * 24 * 3600 * SECOND,
      requirePersistentRedis: v.BULKORDER_ENV === 'production' && v.BULKORDER_ALLOW_VOLATILE_REDIS !== 'yes',
      breaker: {
        windowMs: v.BULKORDER_BREAKER_WINDOW_MS,
        minAttempts: v.BULKORDER_BREAKER_MIN_ATTEMPTS,
        minOrders: v.BULKORDER_BREAKER_MIN_ORDERS,
        minCustomers: v.BULKORDER_BREAKER_MIN_CUSTOMERS,
        refusalRatio: v.BULKORDER_BREAKER_REFUSAL_PERCENT / 100,
        serverFailingRatio: v.BULKORDER_BREAKER_SERVER_FAILING_PERCENT / 100,
        unreachableRatio: v.BULKORDER_BREAKER_UNREACHABLE_PERCENT / 100,
        credentialsMinAttempts: v.BULKORDER_BREAKER_CREDENTIALS_MIN_ATTEMPTS,
        openMs: v.BULKORDER_BREAKER_OPEN_MS,
        maxOpenMs: Math.max(v.BULKORDER_BREAKER_MAX_OPEN_MS, v.BULKORDER_BREAKER_OPEN_MS),
        trialCalls: v.BULKORDER_BREAKER_TRIAL_CALLS,
        alertAfterMs: v.BULKORDER_BREAKER_ALERT_AFTER_MS,
      },
      shutdownGraceMs: v.BULKORDER_SHUTDOWN_GRACE_MS,
      stalledIntervalMs: v.BULKORDER_STALLED_INTERVAL_MS,
    },
    dashboard: { token: v.BULKORDER_DASHBOARD_TOKEN, publicUrl: v.BULKORDER_DASHBOARD_URL, uploadMaxBytes: v.BULKORDER_UPLOAD_MAX_BYTES, hosts: v.BULKORDER_DASHBOARD_HOSTS },
    notify: { urls: v.BULKORDER_NOTIFY_URLS ?? [], timeoutMs: v.BULKORDER_NOTIFY_TIMEOUT_MS, smtp: smtpSettings(v) },
  };
}

function smtpSettings(v: Parsed): SmtpSettings | undefined {
  if (v.BULKORDER_NOTIFY_SMTP_HOST === undefined) return undefined;
  if (v.BULKORDER_NOTIFY_SMTP_FROM === undefined) throw new ConfigError('BULKORDER_NOTIFY_SMTP_FROM', 'is required with BULKORDER_NOTIFY_SMTP_HOST');
  if (v.BULKORDER_NOTIFY_SMTP_TO === undefined) throw new ConfigError('BULKORDER_NOTIFY_SMTP_TO', 'is required with BULKORDER_NOTIFY_SMTP_HOST');
  return {
    host: v.BULKORDER_NOTIFY_SMTP_HOST,
    port: v.BULKORDER_NOTIFY_SMTP_PORT,
    secure: v.BULKORDER_NOTIFY_SMTP_SECURE === 'yes',
    user: v.BULKORDER_NOTIFY_SMTP_USER,
    password: v.BULKORDER_NOTIFY_SMTP_PASSWORD,
    from: v.BULKORDER_NOTIFY_SMTP_FROM,
    to: v.BULKORDER_NOTIFY_SMTP_TO,
  };
}

function credentialPair(infix: string, id: string | undefined, secret: Secret | undefined, api: ApiName): Partial<Record<ApiName, ApiCredentials>> {
  if (id === undefined && secret === undefined) return {};
  if (id === undefined) throw new ConfigError(`BULKORDER_${infix}_CLIENT_ID`, `is missing while BULKORDER_${infix}_CLIENT_SECRET is set`);
  if (secret === undefined) throw new ConfigError(`BULKORDER_${infix}_CLIENT_SECRET`, `is missing while BULKORDER_${infix}_CLIENT_ID is set`);
  return { [api]: { clientId: id, clientSecret: secret } };
}

/** The settings one API needs; throws ConfigError naming the first missing variable. */
export function requireApi(config: Config, api: ApiName): ApiSettings {
  const infix = api === 'business' ? 'BUSINESS' : 'CAFETARIAPLAN';
  if (config.baseUrl === undefined) throw new ConfigError('BULKORDER_BASE_URL', 'is required to call the API ({base_url})');
  if (config.userAgent === undefined) throw new ConfigError('BULKORDER_USER_AGENT', 'is required: <brand>-<CompanyName>, e.g. Acme-AcmeTradingBV');
  const credentials = config.credentials[api];
  if (credentials === undefined) throw new ConfigError(`BULKORDER_${infix}_CLIENT_ID`, `is required for the ${api} API (with BULKORDER_${infix}_CLIENT_SECRET)`);
  return Object.freeze({
    api,
    env: config.env,
    apiBaseUrl: apiBaseUrl(config.baseUrl, api),
    tokenUrl: `${config.authUrl ?? config.baseUrl}/oauth2/token`,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    userAgent: config.userAgent,
    tokenAuth: config.tokenAuth,
    http: config.http,
    responseFields: config.responseFields,
    ambiguousStatuses: config.ambiguousStatuses,
    idempotencyHeader: config.idempotencyHeader,
  });
}

/** One Redis Cluster seed node. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

function redisNode(hostPort: string): RedisNode {
  const at = hostPort.lastIndexOf(':');
  return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
}

/** Refuses a base or auth URL that belongs to the other environment (src/target.ts has the rule). */
function assertTargetAgrees(config: Config): void {
  const urls = (['BULKORDER_BASE_URL', 'BULKORDER_AUTH_URL'] as const).flatMap((variable) => {
    const url = variable === 'BULKORDER_BASE_URL' ? config.baseUrl : config.effective.BULKORDER_AUTH_URL;
    return url === undefined || url === '' ? [] : [{ variable, url, source: describeSource(config.sources[variable]) }];
  });
  const problem = targetMismatch(config.env, describeSource(config.sources.BULKORDER_ENV), urls, config.hostRules);
  if (problem !== undefined) throw new ConfigError('BULKORDER_ENV', problem);
}

/** `from the env-file`, `from the environment`, `default`, `set by the command`. */
export function describeSource(source: ConfigSource | undefined): string {
  switch (source) {
    case 'env-file':
      return 'from the env-file';
    case 'environment':
      return 'from the environment';
    case 'override':
      return 'set by the command';
    default:
      return 'default';
  }
}

/**
 * The namespace of every Redis key of one target: `<BULKORDER_REDIS_PREFIX>:<env>:<id>`, where the
 * id hashes the environment, the API's base URL and the client id (src/target.ts `targetId`). The
 * orders' ledger, queue and batches use the Business API's; employee accounts (`<prefix>:accounts`)
 * the Cafetariaplan API's. On a Redis Cluster the whole prefix is a hash tag (`{bulkorder:<env>:<id>}`).
 * Throws ConfigError when the URL or client id is missing: a keyspace
 * guessed without them could answer for another API.
 */
export function redisPrefix(config: Pick<Config, 'env' | 'redisKeyPrefix' | 'baseUrl' | 'credentials'> & Partial<Pick<Config, 'redisClusterNodes'>>, api: ApiName = 'business'): string {
  const infix = api === 'business' ? 'BUSINESS' : 'CAFETARIAPLAN';
  if (config.baseUrl === undefined) throw new ConfigError('BULKORDER_BASE_URL', 'is required: what Redis keeps (ledger, queue, batches) belongs to the API it is sent to');
  const credentials = config.credentials[api];
  if (credentials === undefined) throw new ConfigError(`BULKORDER_${infix}_CLIENT_ID`, `is required for the ${api} API (with BULKORDER_${infix}_CLIENT_SECRET): its Redis keys are kept per client`);
  const prefix = `${config.redisKeyPrefix}:${config.env}:${targetId(config.env, apiBaseUrl(config.baseUrl, api), credentials.clientId)}`;
  // On a Redis Cluster a hash tag: BullMQ's scripts and ours touch several keys at once, which a cluster
  // allows only within one slot; each environment and target (src/keyspace.ts subPrefix: and kind) gets its own.
  return (config.redisClusterNodes?.length ?? 0) > 0 ? `{${prefix}}` : prefix;
}

/** Which API one kind's records go to (environment, base URL, client id): what src/target.ts `targetId` hashes. */
export function apiTarget(config: Pick<Config, 'env' | 'baseUrl' | 'credentials'>, api: ApiName = 'business'): { env: string; apiBaseUrl: string; clientId: string } {
  const infix = api === 'business' ? 'BUSINESS' : 'CAFETARIAPLAN';
  if (config.baseUrl === undefined) throw new ConfigError('BULKORDER_BASE_URL', 'is required: the records go to the API it names');
  const credentials = config.credentials[api];
  if (credentials === undefined) throw new ConfigError(`BULKORDER_${infix}_CLIENT_ID`, `is required for the ${api} API (with BULKORDER_${infix}_CLIENT_SECRET)`);
  return { env: config.env, apiBaseUrl: apiBaseUrl(config.baseUrl, api), clientId: credentials.clientId };
}

function apiBaseUrl(baseUrl: string, api: ApiName): string {
  return `${baseUrl}/${api === 'business' ? 'business-api' : 'cafetariaplan-api'}`;
}

/**
 * Logs the effective environment and URL once at start, with where each came from. Production is
 * announced loudly; "not processed" is only ever said of a URL recognised as acceptance (loadConfig
 * refuses any other under acceptance). Never logs secrets.
 */
export function announceConfig(config: Config, logger: Logger): void {
  const facts = {
    env: config.env,
    envSource: config.sources.BULKORDER_ENV,
    baseUrl: config.baseUrl,
    baseUrlSource: config.sources.BULKORDER_BASE_URL,
    authUrl: config.authUrl,
    envFile: config.envFile,
    apis: Object.keys(config.credentials),
  };
  if (config.shadowed.length > 0) {
    logger.warn({ variables: config.shadowed, envFile: config.envFile }, `the env-file overrides inherited environment variables: ${config.shadowed.join(', ')}`);
  }
  const where = `BULKORDER_ENV ${describeSource(config.sources.BULKORDER_ENV)}, BULKORDER_BASE_URL ${config.baseUrl ?? '(not set)'} ${describeSource(config.sources.BULKORDER_BASE_URL)}`;
  if (config.env === 'production') {
    logger.warn(facts, `PRODUCTION (${where}): orders are fulfilled and customers receive e-mail and SMS`);
  } else {
    logger.info(facts, `acceptance (${where}): the API does not process these orders`);
  }
}

function readEnvFile(path: string, flag: string): Record<string, string | undefined> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(flag, `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'unreadable')}`);
  }
  return parseEnv(text);
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** Why a URL is refused, or undefined. http:// only to loopback: credentials must not cross a network in clear. */
export function urlProblem(value: string, options: { allowQuery?: boolean } = {}): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must start with https://';
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain credentials';
  if ((parsed.search !== '' && options.allowQuery !== true) || parsed.hash !== '') return 'must not have a query or fragment';
  if (parsed.protocol === 'http:' && !isLoopback(parsed.hostname)) return 'http:// is allowed for loopback hosts only (127.0.0.0/8, ::1, localhost); use https://';
  return undefined;
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

function userAgentProblem(value: string): string | undefined {
  if (value.length > 100) return 'is longer than 100 characters';
  if (!USER_AGENT_FORMAT.test(value)) return 'must look like <brand>-<CompanyName> (letters and digits, one dash after the brand), e.g. Acme-AcmeTradingBV';
  const brand = value.slice(0, value.indexOf('-')).toLowerCase();
  if (LIBRARY_BRANDS.has(brand)) return `must name your brand and company, not "${brand}"`;
  return undefined;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !(value instanceof Secret) && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
