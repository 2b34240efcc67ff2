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
 * one line to `schema` (src/config/configSchema.ts) and map it in `toConfig`;
 * .env.example must document it (a test checks that).
 */
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { ConfigError } from './errors.js';
import type { Logger } from './logger.js';
import { targetMismatch } from './target.js';
import { CONFIG_VARIABLES, schema, SECOND, type Parsed } from './config/configSchema.js';
import { Secret, SecretUrl } from './config/secret.js';
import type { ApiCredentials, ApiName, Config, ConfigSource, SmtpSettings } from './config/configTypes.js';

export { Secret, SecretUrl, maskPassword } from './config/secret.js';
export type * from './config/configTypes.js';
export { CONFIG_VARIABLES } from './config/configSchema.js';
export { apiTarget, redisPrefix, requireApi } from './config/apiTarget.js';

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
  const fromFile =
    options.envFile === undefined ? {} : readEnvFile(options.envFile, options.envFileFlag ?? '--env-file');
  const real = options.env ?? process.env;
  const raw: Record<string, string> = {};
  const sources: Record<string, ConfigSource> = {};
  const shadowed: string[] = [];
  for (const name of CONFIG_VARIABLES) {
    // An empty value (`VAR=` in a file) means "not set", as most dotenv users expect.
    const [override, file, inherited] = [
      nonEmpty(options.overrides?.[name]),
      nonEmpty(fromFile[name]),
      nonEmpty(real[name]),
    ];
    const [value, source]: [string | undefined, ConfigSource] =
      override !== undefined
        ? [override, 'override']
        : file !== undefined
          ? [file, 'env-file']
          : inherited !== undefined
            ? [inherited, 'environment']
            : [undefined, 'default'];
    if (source === 'env-file' && inherited !== undefined && inherited !== file) shadowed.push(name);
    sources[name] = source;
    if (value !== undefined) raw[name] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? 'configuration'), issue?.message ?? 'invalid');
  }
  const config = toConfig(parsed.data, options.confirmProduction === true, {
    envFile: options.envFile,
    sources,
    shadowed,
    effective: effectiveValues(parsed.data),
  });
  assertTargetAgrees(config);
  return deepFreeze(config);
}

/** Each variable's parsed value as text, secrets masked. */
function effectiveValues(parsed: Parsed): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of CONFIG_VARIABLES) {
    const value: unknown = parsed[name as keyof Parsed];
    out[name] =
      value === undefined
        ? ''
        : value instanceof SecretUrl
          ? value.toString()
          : value instanceof Secret
            ? '********'
            : Array.isArray(value)
              ? value.length === 0
                ? 'none'
                : value.join(',')
              : String(value);
  }
  return out;
}

type Provenance = Pick<Config, 'envFile' | 'sources' | 'shadowed' | 'effective'>;

function toConfig(v: Parsed, flagConfirmed: boolean, provenance: Provenance): Config {
  if (flagConfirmed && v.BULKORDER_ENV !== 'production') {
    throw new ConfigError('BULKORDER_ENV', '--production was given but BULKORDER_ENV is not production');
  }
  const productionConfirmed =
    v.BULKORDER_ENV === 'production' && (flagConfirmed || v.BULKORDER_CONFIRM_PRODUCTION === 'yes');
  if (v.BULKORDER_ENV === 'production') {
    if (!productionConfirmed) {
      throw new ConfigError(
        'BULKORDER_CONFIRM_PRODUCTION',
        'production sends real orders and customer e-mail: set BULKORDER_CONFIRM_PRODUCTION=yes or pass --production',
      );
    }
    for (const name of ['BULKORDER_BASE_URL', 'BULKORDER_AUTH_URL'] as const) {
      const value = v[name];
      if (value !== undefined && !value.startsWith('https://'))
        throw new ConfigError(name, 'production accepts https:// URLs only');
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
      ...credentialPair(
        'CAFETARIAPLAN',
        v.BULKORDER_CAFETARIAPLAN_CLIENT_ID,
        v.BULKORDER_CAFETARIAPLAN_CLIENT_SECRET,
        'cafetariaplan',
      ),
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
      rate: {
        floorPerSecond: v.BULKORDER_RATE_FLOOR,
        decrease: v.BULKORDER_RATE_DECREASE_PERCENT / 100,
        increasePerSecond: v.BULKORDER_RATE_INCREASE,
        adapt: v.BULKORDER_RATE_ADAPT,
      },
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
      redisCheck: { everyMs: v.BULKORDER_REDIS_CHECK_MS, unverifiable: v.BULKORDER_REDIS_CHECK_UNVERIFIABLE },
    },
    dashboard: {
      token: v.BULKORDER_DASHBOARD_TOKEN,
      publicUrl: v.BULKORDER_DASHBOARD_URL,
      uploadMaxBytes: v.BULKORDER_UPLOAD_MAX_BYTES,
      hosts: v.BULKORDER_DASHBOARD_HOSTS,
    },
    notify: { urls: v.BULKORDER_NOTIFY_URLS ?? [], timeoutMs: v.BULKORDER_NOTIFY_TIMEOUT_MS, smtp: smtpSettings(v) },
  };
}

function smtpSettings(v: Parsed): SmtpSettings | undefined {
  if (v.BULKORDER_NOTIFY_SMTP_HOST === undefined) return undefined;
  if (v.BULKORDER_NOTIFY_SMTP_FROM === undefined)
    throw new ConfigError('BULKORDER_NOTIFY_SMTP_FROM', 'is required with BULKORDER_NOTIFY_SMTP_HOST');
  if (v.BULKORDER_NOTIFY_SMTP_TO === undefined)
    throw new ConfigError('BULKORDER_NOTIFY_SMTP_TO', 'is required with BULKORDER_NOTIFY_SMTP_HOST');
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

function credentialPair(
  infix: string,
  id: string | undefined,
  secret: Secret | undefined,
  api: ApiName,
): Partial<Record<ApiName, ApiCredentials>> {
  if (id === undefined && secret === undefined) return {};
  if (id === undefined)
    throw new ConfigError(`BULKORDER_${infix}_CLIENT_ID`, `is missing while BULKORDER_${infix}_CLIENT_SECRET is set`);
  if (secret === undefined)
    throw new ConfigError(`BULKORDER_${infix}_CLIENT_SECRET`, `is missing while BULKORDER_${infix}_CLIENT_ID is set`);
  return { [api]: { clientId: id, clientSecret: secret } };
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
    logger.warn(
      { variables: config.shadowed, envFile: config.envFile },
      `the env-file overrides inherited environment variables: ${config.shadowed.join(', ')}`,
    );
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

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !(value instanceof Secret) && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
