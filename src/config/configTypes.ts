/** The shapes of the configuration: what loadConfig (src/config.ts) returns and what each part of it means. */
import type { DeliverySettings } from '../deliverySettings.js';
import type { HostRules } from '../target.js';
import type { PemSource, Secret, SecretUrl } from './secret.js';
import type { PrivateAllowance } from './privateAddress.js';

export type Environment = 'acceptance' | 'production';
export type ApiName = 'business' | 'cafetariaplan';
export type TokenAuthMethod = 'body' | 'basic';

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
  /** A 2xx body with one of these (and no remote id) is an error, held for review (ERROR_BODY_2XX); empty: none. */
  readonly errorBody: readonly string[];
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
  /** TLS files of a rediss:// Redis (BULKORDER_REDIS_TLS_*); empty: the system's CAs, no client certificate. */
  readonly redisTls: RedisTlsSettings;
  /**
   * Seed nodes of a Redis Cluster (BULKORDER_REDIS_CLUSTER_NODES, `host:port,...`); empty for one Redis
   * at redisUrl. With a cluster every key prefix carries a hash tag (`redisPrefix`), so each
   * environment and record kind lives in one slot and its scripts and transactions stay valid.
   */
  readonly redisClusterNodes: readonly RedisNode[];
  /**
   * How long a Redis Cluster failover is waited out (BULKORDER_REDIS_FAILOVER_MAX_MS, default 60 s): commands
   * retry MOVED, ASK, CLUSTERDOWN, TRYAGAIN and lost connections with bounded backoff for this long, then exit 5
   * naming the cluster's state (REDIS_CLUSTER_DOWN), as does `watch --once`; workers, the dashboard and a running
   * `watch` keep waiting.
   */
  readonly redisFailoverMaxMs: number;
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
  /** OpenTelemetry traces (OTEL_* variables, src/tracing); undefined: off, and no OpenTelemetry module is loaded. */
  readonly tracing: TracingSettings | undefined;
  /** Notifications (src/notify): webhooks and e-mail. */
  readonly notify: NotifySettings;
  /** Where files bulkorder writes for itself go, and how its CSV files are written. */
  readonly files: FileSettings;
  /**
   * The operator's time zone (BULKORDER_TIMEZONE, default the system's): times in the dashboard, `status` and
   * `schedule list` are shown in it, with the offset. JSON keeps UTC (ISO 8601).
   */
  readonly timeZone: string;
}

/**
 * How results, rejects and dead-letter exports are written, where the input's own dialect is not wanted
 * (BULKORDER_OUTPUT_*): each field undefined means "as the input" (src/ingest/csvDialect.ts).
 */
export interface CsvOutputSettings {
  readonly delimiter?: string;
  readonly encoding?: 'utf-8' | 'windows-1252' | 'latin1';
  readonly bom?: boolean;
}

export interface FileSettings {
  /** BULKORDER_DATA_DIR, absolute; default `~/.local/share/bulkorder`. */
  readonly dataDir: string;
  /**
   * BULKORDER_RESULTS_DIR, absolute; default `<dataDir>/results`. Dashboard uploads and scheduled imports keep
   * their input, rejects and results files here (`uploads/`, `schedules/<name>/`).
   */
  readonly resultsDir: string;
  readonly csv: CsvOutputSettings;
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
  /**
   * Non-public addresses webhooks may reach (BULKORDER_NOTIFY_ALLOW_PRIVATE; default none): loopback,
   * link-local, private networks and cloud metadata are refused at load (IP literals) and at every send.
   */
  readonly allowPrivate: PrivateAllowance;
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

/** TLS of a rediss:// Redis: each PEM read once at start; printed as its path, never its text. */
export interface RedisTlsSettings {
  /** CA certificate(s) that sign the server's certificate (BULKORDER_REDIS_TLS_CA); default: the system's CAs. */
  readonly ca?: PemSource;
  /** Client certificate, when the server asks for one (BULKORDER_REDIS_TLS_CERT, with the key). */
  readonly cert?: PemSource;
  /** Its private key (BULKORDER_REDIS_TLS_KEY): a secret. */
  readonly key?: PemSource;
  /** The key's passphrase (BULKORDER_REDIS_TLS_KEY_PASSPHRASE), if it has one. */
  readonly passphrase?: Secret;
}

/** One Redis Cluster seed node. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/** Where traces go (OTLP over HTTP, JSON) and the service they are from. */
export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  readonly tracesUrl: string;
  /** OTEL_SERVICE_NAME; default bulkorder. */
  readonly serviceName: string;
}
