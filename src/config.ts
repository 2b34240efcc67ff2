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
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from './errors.js';
import type { Logger } from './logger.js';
import { targetMismatch } from './target.js';
import { allowanceText, hostProblem, isAllowance } from './config/privateAddress.js';
import { CONFIG_VARIABLES, schema, SECOND, type Parsed } from './config/configSchema.js';
import { PemSource, Secret, SecretUrl } from './config/secret.js';
import type {
  ApiCredentials,
  ApiName,
  Config,
  ConfigSource,
  CsvOutputSettings,
  FileSettings,
  RedisTlsSettings,
  SmtpSettings,
  TracingSettings,
} from './config/configTypes.js';

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
    const [value, source] = firstSet([
      [override, 'override'],
      [file, 'env-file'],
      [inherited, 'environment'],
    ]);
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
    out[name] = valueText(value);
  }
  return out;
}

/** A variable's value from the first place that sets it (override, env file, environment), else the default. */
function firstSet(places: [string | undefined, ConfigSource][]): [string | undefined, ConfigSource] {
  return places.find(([value]) => value !== undefined) ?? [undefined, 'default'];
}

/** One parsed value as text: secrets masked, lists joined, an empty list as `none`. */
function valueText(value: unknown): string {
  if (value === undefined) return '';
  if (value instanceof SecretUrl || value instanceof PemSource) return value.toString();
  if (value instanceof Secret) return '********';
  if (isAllowance(value)) return allowanceText(value);
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(listItem).join(',');
  return String(value);
}

/** One item of a list setting as text: a cluster node as host:port, a webhook URL masked (a Secret prints so). */
function listItem(item: unknown): string {
  if (typeof item === 'object' && item !== null && 'host' in item && 'port' in item)
    return `${String(item.host)}:${String(item.port)}`;
  return String(item);
}

type Provenance = Pick<Config, 'envFile' | 'sources' | 'shadowed' | 'effective'>;

// eslint-disable-next-line max-lines-per-function -- one field per setting, in the order of Config: a list that reads whole
function toConfig(v: Parsed, flagConfirmed: boolean, provenance: Provenance): Config {
  let zone: string | undefined;
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
    redisTls: redisTls(v),
    redisClusterNodes: v.BULKORDER_REDIS_CLUSTER_NODES,
    redisFailoverMaxMs: v.BULKORDER_REDIS_FAILOVER_MAX_MS,
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
      errorBody: v.BULKORDER_ERROR_BODY_FIELDS,
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
        probe: v.BULKORDER_RATE_PROBE_PERCENT / 100,
      },
      ambiguousPolicy: v.BULKORDER_AMBIGUOUS,
      ledgerRetentionMs: v.BULKORDER_LEDGER_RETENTION_DAYS * 24 * 3600 * SECOND,
      accountRetentionMs: v.BULKORDER_ACCOUNT_RETENTION_DAYS * 24 * 3600 * SECOND,
      parkedRetentionMs: v.BULKORDER_PARKED_RETENTION_DAYS * 24 * 3600 * SECOND,
      requirePersistentRedis: v.BULKORDER_ENV === 'production' && v.BULKORDER_ALLOW_VOLATILE_REDIS !== 'yes',
      requireVerifiableRedis: v.BULKORDER_ENV === 'production' && v.BULKORDER_ALLOW_UNVERIFIED_REDIS !== 'yes',
      breaker: {
        windowMs: v.BULKORDER_BREAKER_WINDOW_MS,
        minAttempts: v.BULKORDER_BREAKER_MIN_ATTEMPTS,
        minOrders: v.BULKORDER_BREAKER_MIN_ORDERS,
        minCustomers: v.BULKORDER_BREAKER_MIN_CUSTOMERS,
        minBatches: v.BULKORDER_BREAKER_MIN_BATCHES,
        refusalRatio: v.BULKORDER_BREAKER_REFUSAL_PERCENT / 100,
        serverFailingRatio: v.BULKORDER_BREAKER_SERVER_FAILING_PERCENT / 100,
        unreachableRatio: v.BULKORDER_BREAKER_UNREACHABLE_PERCENT / 100,
        credentialsMinAttempts: v.BULKORDER_BREAKER_CREDENTIALS_MIN_ATTEMPTS,
        openMs: v.BULKORDER_BREAKER_OPEN_MS,
        maxOpenMs: Math.max(v.BULKORDER_BREAKER_MAX_OPEN_MS, v.BULKORDER_BREAKER_OPEN_MS),
        trialCalls: v.BULKORDER_BREAKER_TRIAL_CALLS,
        alertAfterMs: v.BULKORDER_BREAKER_ALERT_AFTER_MS,
      },
      canary: {
        orders: v.BULKORDER_CANARY_ORDERS,
        refusedPercent: v.BULKORDER_CANARY_REFUSED_PERCENT,
        probeMs: v.BULKORDER_CANARY_PROBE_MS,
        maxProbeMs: Math.max(v.BULKORDER_CANARY_MAX_PROBE_MS, v.BULKORDER_CANARY_PROBE_MS),
        minRefused: v.BULKORDER_CANARY_MIN_REFUSED,
      },
      shutdownGraceMs: v.BULKORDER_SHUTDOWN_GRACE_MS,
      stalledIntervalMs: v.BULKORDER_STALLED_INTERVAL_MS,
      maxStalls: v.BULKORDER_MAX_STALLS,
      redisCheck: { everyMs: v.BULKORDER_REDIS_CHECK_MS, unverifiable: v.BULKORDER_REDIS_CHECK_UNVERIFIABLE },
      wedgeCheck: { everyMs: v.BULKORDER_WEDGE_CHECK_MS, checks: v.BULKORDER_WEDGE_CHECKS },
    },
    dashboard: {
      token: v.BULKORDER_DASHBOARD_TOKEN,
      publicUrl: v.BULKORDER_DASHBOARD_URL,
      uploadMaxBytes: v.BULKORDER_UPLOAD_MAX_BYTES,
      hosts: v.BULKORDER_DASHBOARD_HOSTS,
    },
    notify: {
      urls: webhookUrls(v),
      timeoutMs: v.BULKORDER_NOTIFY_TIMEOUT_MS,
      allowPrivate: v.BULKORDER_NOTIFY_ALLOW_PRIVATE,
      smtp: smtpSettings(v),
    },
    files: fileSettings(v),
    tracing: tracingSettings(v),
    // The system's zone (the runtime reads TZ itself) unless the operator names one, found when first read: asking
    // ICU for it loads its zone data, 12-50 ms of a command's start, and most commands (import, worker) show no time.
    get timeZone() {
      return (zone ??= v.BULKORDER_TIMEZONE ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
    },
  };
}

function fileSettings(v: Parsed): FileSettings {
  const dataDir = resolve(v.BULKORDER_DATA_DIR ?? join(homedir(), '.local', 'share', 'bulkorder'));
  return { dataDir, resultsDir: resolve(v.BULKORDER_RESULTS_DIR ?? join(dataDir, 'results')), csv: csvSettings(v) };
}

const CSV_VARIABLES = ['BULKORDER_OUTPUT_DELIMITER', 'BULKORDER_OUTPUT_ENCODING', 'BULKORDER_OUTPUT_BOM'] as const;

function csvSettings(v: Pick<Parsed, (typeof CSV_VARIABLES)[number]>): CsvOutputSettings {
  return {
    ...(v.BULKORDER_OUTPUT_DELIMITER === undefined ? {} : { delimiter: v.BULKORDER_OUTPUT_DELIMITER }),
    ...(v.BULKORDER_OUTPUT_ENCODING === undefined ? {} : { encoding: v.BULKORDER_OUTPUT_ENCODING }),
    ...(v.BULKORDER_OUTPUT_BOM === undefined ? {} : { bom: v.BULKORDER_OUTPUT_BOM }),
  };
}

/**
 * BULKORDER_OUTPUT_* alone, for `validate`, which needs no other configuration (no API, no Redis): a
 * production setting elsewhere in the environment must not stop a dry run. A refused value is exit 2.
 */
export function loadCsvOutputSettings(
  env: Readonly<Record<string, string | undefined>> = process.env,
): CsvOutputSettings {
  const raw = Object.fromEntries(
    CSV_VARIABLES.flatMap((name) => {
      const value = nonEmpty(env[name]);
      return value === undefined ? [] : [[name, value]];
    }),
  );
  const parsed = schema
    .pick({ BULKORDER_OUTPUT_DELIMITER: true, BULKORDER_OUTPUT_ENCODING: true, BULKORDER_OUTPUT_BOM: true })
    .safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? 'configuration'), issue?.message ?? 'invalid');
  }
  return csvSettings(parsed.data);
}

/** The TLS files of a rediss:// Redis; refused with a redis:// URL (they would be silently unused). */
function redisTls(v: Parsed): RedisTlsSettings {
  const tls: RedisTlsSettings = {
    ...(v.BULKORDER_REDIS_TLS_CA === undefined ? {} : { ca: v.BULKORDER_REDIS_TLS_CA }),
    ...(v.BULKORDER_REDIS_TLS_CERT === undefined ? {} : { cert: v.BULKORDER_REDIS_TLS_CERT }),
    ...(v.BULKORDER_REDIS_TLS_KEY === undefined ? {} : { key: v.BULKORDER_REDIS_TLS_KEY }),
    ...(v.BULKORDER_REDIS_TLS_KEY_PASSPHRASE === undefined ? {} : { passphrase: v.BULKORDER_REDIS_TLS_KEY_PASSPHRASE }),
  };
  const set = Object.keys(tls);
  if (set.length > 0 && !v.REDIS_URL.reveal().startsWith('rediss://'))
    throw new ConfigError(
      'REDIS_URL',
      `BULKORDER_REDIS_TLS_* ${set.length === 1 ? 'is' : 'are'} set but REDIS_URL is not rediss://: use rediss://host:port for TLS`,
    );
  if ((tls.cert === undefined) !== (tls.key === undefined))
    throw new ConfigError(
      tls.cert === undefined ? 'BULKORDER_REDIS_TLS_CERT' : 'BULKORDER_REDIS_TLS_KEY',
      'a client certificate needs both BULKORDER_REDIS_TLS_CERT and BULKORDER_REDIS_TLS_KEY',
    );
  return tls;
}

/** The webhook URLs, each refused whose host is a non-public address that BULKORDER_NOTIFY_ALLOW_PRIVATE does not allow. */
function webhookUrls(v: Parsed): readonly Secret[] {
  const urls = v.BULKORDER_NOTIFY_URLS ?? [];
  for (const [i, url] of urls.entries()) {
    // The payload prefix (`slack:`...) off, as the schema's check reads it (src/notify/webhookPayload.ts).
    const bare = url.reveal().replace(/^(slack|teams|json):(?=https?:\/\/)/i, '');
    const problem = hostProblem(new URL(bare).hostname, v.BULKORDER_NOTIFY_ALLOW_PRIVATE);
    // The URL itself is not echoed: webhook URLs carry their secret in the path.
    if (problem !== undefined) throw new ConfigError('BULKORDER_NOTIFY_URLS', `URL ${i + 1}: ${problem}`);
  }
  return urls;
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
    // Data properties only: a getter (the time zone) is not run to freeze what it would return.
    for (const { value: child } of Object.values(Object.getOwnPropertyDescriptors(value))) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * OpenTelemetry traces, by the standard variables: on with an OTLP endpoint, or with OTEL_TRACES_EXPORTER=otlp
 * (the spec's default endpoint, http://localhost:4318); off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true.
 */
function tracingSettings(v: Parsed): TracingSettings | undefined {
  if (v.OTEL_SDK_DISABLED === 'true' || v.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const base = v.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT === undefined && base === undefined && v.OTEL_TRACES_EXPORTER !== 'otlp')
    return undefined;
  const tracesUrl =
    v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(base ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  return { tracesUrl, serviceName: v.OTEL_SERVICE_NAME };
}
