/**
 * Every variable bulkorder reads, as one zod object: its default, its bounds and the sentence a
 * refusal says. To add a setting, add one line here and map it in toConfig (src/config.ts);
 * .env.example must document it (a test checks that).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { AUTO, hostListProblem, splitHostList } from '../target.js';
import { PemSource, Secret, SecretUrl } from './secret.js';
import { parseAllowance } from './privateAddress.js';
import type { RedisNode } from './configTypes.js';

export const SECOND = 1000;

const LIBRARY_BRANDS = new Set([
  'node',
  'nodejs',
  'undici',
  'axios',
  'got',
  'fetch',
  'nodefetch',
  'curl',
  'wget',
  'python',
  'requests',
  'okhttp',
  'java',
  'go',
  'postman',
  'insomnia',
  'httpie',
  'mozilla',
  'bulkorder',
  'brand',
]);
const USER_AGENT_FORMAT = /^[A-Za-z0-9]+-[A-Za-z0-9][A-Za-z0-9._-]*$/;

const milliseconds = (fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number of milliseconds')
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(1, 'must be at least 1')
        .max(3600 * SECOND, 'must be at most 3600000 (one hour)'),
    )
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
/** A PEM given inline (`-----BEGIN ...`, `\\n` read as a line break, as env files write it) or as a file path, read once. */
const pem = (what: string) =>
  z.string().transform((value, ctx) => {
    if (value.startsWith('-----BEGIN')) return new PemSource(value.replace(/\\n/g, '\n'), undefined);
    let text: string;
    try {
      text = readFileSync(value, 'utf8');
    } catch (error) {
      ctx.addIssue({
        code: 'custom',
        message: `cannot read ${value} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}): give the path of a PEM ${what} file, or the PEM itself`,
      });
      return z.NEVER;
    }
    if (!text.includes('-----BEGIN')) {
      ctx.addIssue({ code: 'custom', message: `${value} is not a PEM ${what} file (no -----BEGIN line)` });
      return z.NEVER;
    }
    return new PemSource(text, value);
  });
const clientId = z.string().regex(/^[\x21-\x7e]{1,200}$/, 'must be 1-200 visible ASCII characters');
const clientSecret = z
  .string()
  .max(1000, 'is longer than 1000 characters')
  .transform((value) => new Secret(value));

export const schema = z.object({
  BULKORDER_ENV: z
    .enum(['acceptance', 'production'], { error: 'must be acceptance or production' })
    .default('acceptance'),
  BULKORDER_CONFIRM_PRODUCTION: z.enum(['yes', 'no'], { error: 'must be yes or no' }).default('no'),
  BULKORDER_BASE_URL: url.optional(),
  BULKORDER_AUTH_URL: url.optional(),
  BULKORDER_USER_AGENT: z
    .string()
    .transform((value, ctx) => {
      const problem = userAgentProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      return value;
    })
    .optional(),
  BULKORDER_BUSINESS_CLIENT_ID: clientId.optional(),
  BULKORDER_BUSINESS_CLIENT_SECRET: clientSecret.optional(),
  BULKORDER_CAFETARIAPLAN_CLIENT_ID: clientId.optional(),
  BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: clientSecret.optional(),
  BULKORDER_PRODUCTION_HOSTS: hostList('none'),
  BULKORDER_ACCEPTANCE_HOSTS: hostList(AUTO),
  BULKORDER_ALLOW_VOLATILE_REDIS: z.enum(['yes', 'no'], { error: 'must be yes or no' }).default('no'),
  BULKORDER_ALLOW_UNVERIFIED_REDIS: z.enum(['yes', 'no'], { error: 'must be yes or no' }).default('no'),
  BULKORDER_PARKED_RETENTION_DAYS: count(30, 1, 3650),
  BULKORDER_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, _ . or -')
    .default('bulkorder'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL')
    .default('redis://127.0.0.1:6379')
    .transform((url) => new SecretUrl(url)),
  BULKORDER_REDIS_TLS_CA: pem('CA certificate').optional(),
  BULKORDER_REDIS_TLS_CERT: pem('certificate').optional(),
  BULKORDER_REDIS_TLS_KEY: pem('private key').optional(),
  BULKORDER_REDIS_TLS_KEY_PASSPHRASE: clientSecret.optional(),
  BULKORDER_REDIS_CLUSTER_NODES: z
    .string()
    .regex(
      /^$|^[A-Za-z0-9_.-]+:\d{1,5}(,[A-Za-z0-9_.-]+:\d{1,5})*$/,
      'must be a comma-separated list of host:port, e.g. 10.0.0.1:7000,10.0.0.2:7000',
    )
    .default('')
    .transform((value) => (value === '' ? [] : value.split(',').map(redisNode))),
  BULKORDER_REDIS_FAILOVER_MAX_MS: milliseconds(60 * SECOND),
  BULKORDER_WORKER_PROCESSES: z
    .string()
    .regex(/^(auto|[1-9]\d{0,2})$/, "must be 'auto' (one per core) or a whole number from 1 to 999")
    .default('auto')
    .transform((value) => (value === 'auto' ? ('auto' as const) : Number(value))),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
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
  BULKORDER_ORDERS_PER_JOB: count(25, 1, 100),
  BULKORDER_ATTEMPTS: count(21, 1, 100),
  BULKORDER_BACKOFF_BASE_MS: milliseconds(2 * SECOND),
  BULKORDER_BACKOFF_MAX_MS: milliseconds(600 * SECOND),
  BULKORDER_MAX_RPS: count(0, 0, 100_000),
  BULKORDER_RATE_FLOOR: count(1, 1, 100_000),
  BULKORDER_RATE_DECREASE_PERCENT: count(10, 1, 90),
  BULKORDER_RATE_INCREASE: count(2, 1, 100_000),
  BULKORDER_RATE_PROBE_PERCENT: count(50, 0, 100),
  BULKORDER_RATE_ADAPT: z.enum(['measured', 'halve'], { error: 'must be measured or halve' }).default('halve'),
  BULKORDER_AMBIGUOUS: z.enum(['hold', 'resend'], { error: 'must be hold or resend' }).default('hold'),
  BULKORDER_LEDGER_RETENTION_DAYS: count(90, 1, 3650),
  BULKORDER_ACCOUNT_RETENTION_DAYS: count(3650, 1, 36500),
  BULKORDER_BREAKER_WINDOW_MS: milliseconds(60 * SECOND),
  BULKORDER_BREAKER_MIN_ATTEMPTS: count(20, 1, 1_000_000),
  BULKORDER_BREAKER_MIN_ORDERS: count(10, 1, 1_000_000),
  BULKORDER_BREAKER_MIN_CUSTOMERS: count(3, 1, 1_000_000),
  BULKORDER_BREAKER_MIN_BATCHES: count(2, 1, 1_000_000),
  BULKORDER_CANARY_ORDERS: count(20, 1, 1_000_000),
  BULKORDER_CANARY_REFUSED_PERCENT: count(50, 1, 100),
  BULKORDER_CANARY_PROBE_MS: milliseconds(60 * SECOND),
  BULKORDER_CANARY_MAX_PROBE_MS: milliseconds(600 * SECOND),
  BULKORDER_CANARY_MIN_REFUSED: count(5, 1, 1_000_000),
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
  BULKORDER_MAX_STALLS: count(5, 1, 1000),
  BULKORDER_REDIS_CHECK_MS: milliseconds(5 * SECOND),
  BULKORDER_REDIS_CHECK_UNVERIFIABLE: z.enum(['pause', 'run'], { error: 'must be pause or run' }).default('run'),
  // 0 turns the guard of BullMQ's blocking wait off (src/worker/wedgeGuard.ts).
  BULKORDER_WEDGE_CHECK_MS: count(10 * SECOND, 0, 3600 * SECOND),
  BULKORDER_WEDGE_CHECKS: count(3, 2, 1000),
  BULKORDER_DASHBOARD_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters (e.g. openssl rand -hex 24)')
    .max(1000, 'is longer than 1000 characters')
    .transform((value) => new Secret(value))
    .optional(),
  BULKORDER_UPLOAD_MAX_BYTES: count(200 * 1024 * 1024, 1, 64 * 1024 * 1024 * 1024),
  BULKORDER_DASHBOARD_URL: z
    .string()
    .url('must be a URL, e.g. https://bulkorder.example.com')
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  BULKORDER_DASHBOARD_HOSTS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter((h) => h !== ''),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^(\*|(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/,
            'must be host names (dash.example.com), *.domain, [IPv6] or *, comma-separated',
          ),
      ),
    ),
  BULKORDER_NOTIFY_URLS: z
    .string()
    .transform((value, ctx) => {
      const urls = value
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== '');
      for (const [i, u] of urls.entries()) {
        // A `slack:`, `teams:` or `json:` before the URL picks the payload (src/notify/webhookPayload.ts); Teams workflow URLs carry their signature in the query.
        const problem = urlProblem(u.replace(/^(slack|teams|json):(?=https?:\/\/)/i, ''), { allowQuery: true });
        // The URL itself is not echoed: webhook URLs carry their secret in the path.
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `URL ${i + 1} ${problem}` });
      }
      return urls.map((u) => new Secret(u));
    })
    .optional(),
  BULKORDER_NOTIFY_ALLOW_PRIVATE: z
    .string()
    .default('none')
    .transform((value, ctx) => {
      const parsed = parseAllowance(value);
      if ('problem' in parsed) {
        ctx.addIssue({ code: 'custom', message: `${parsed.problem}; or * for any, none for no private address` });
        return z.NEVER;
      }
      return parsed.allowance;
    }),
  BULKORDER_NOTIFY_TIMEOUT_MS: milliseconds(5 * SECOND),
  BULKORDER_NOTIFY_SMTP_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.:[\]-]{1,253}$/, 'must be a host name or address')
    .optional(),
  BULKORDER_NOTIFY_SMTP_PORT: count(587, 1, 65535),
  BULKORDER_NOTIFY_SMTP_SECURE: z
    .enum(['yes', 'no'], { error: 'must be yes (TLS from the start, port 465) or no (STARTTLS when offered)' })
    .default('no'),
  BULKORDER_NOTIFY_SMTP_USER: z.string().max(200).optional(),
  BULKORDER_NOTIFY_SMTP_PASSWORD: clientSecret.optional(),
  BULKORDER_NOTIFY_SMTP_FROM: z.string().email('must be an e-mail address').optional(),
  BULKORDER_NOTIFY_SMTP_TO: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== ''),
    )
    .pipe(
      z
        .array(z.string().email('must be a comma-separated list of e-mail addresses'))
        .min(1, 'must name at least one address'),
    )
    .optional(),
  BULKORDER_DATA_DIR: z.string().optional(),
  BULKORDER_RESULTS_DIR: z.string().optional(),
  BULKORDER_OUTPUT_DELIMITER: z
    .string()
    .regex(/^(input|,|;|\||tab)$/, "must be input (the input's own), ',', ';', '|' or tab")
    .default('input')
    .transform((value) => (value === 'input' ? undefined : delimiterChar(value))),
  BULKORDER_OUTPUT_ENCODING: z
    .enum(['input', 'utf-8', 'windows-1252', 'latin1'], {
      error: "must be input (the input's own), utf-8, windows-1252 or latin1",
    })
    .default('input')
    .transform((value) => (value === 'input' ? undefined : value)),
  BULKORDER_OUTPUT_BOM: z
    .enum(['input', 'yes', 'no'], { error: 'must be input (as the input has it), yes or no' })
    .default('input')
    .transform((value) => (value === 'input' ? undefined : value === 'yes')),
  BULKORDER_TIMEZONE: z
    .string()
    .refine(isTimeZone, 'must be an IANA time zone, e.g. Europe/Amsterdam or UTC')
    .optional(),
  // OpenTelemetry's standard variables (README "Run it with your stack"): traces are on when an OTLP endpoint or
  // OTEL_TRACES_EXPORTER=otlp is set; the SDK is loaded only then.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url('must be a URL, e.g. http://otel-collector:4318').optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .string()
    .url('must be a URL, e.g. http://otel-collector:4318/v1/traces')
    .optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { error: 'must be otlp or none' }).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).default('bulkorder'),
  OTEL_SDK_DISABLED: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
  BULKORDER_ERROR_CODE_FIELDS: fieldList('code,errorCode,error_code,error.code,error,errors.0.code'),
  BULKORDER_ERROR_MESSAGE_FIELDS: fieldList(
    'message,error_description,detail,error.message,errors.0.message,errors.0.detail,title',
  ),
  BULKORDER_REMOTE_ID_FIELDS: fieldList('orderId,id,orderNumber,order.id,data.orderId,data.id'),
  // A 2xx with one of these and no remote id is an error body (ERROR_BODY_2XX); `none`: every 2xx is delivered.
  BULKORDER_ERROR_BODY_FIELDS: z
    .string()
    .regex(/^(none|[A-Za-z0-9_.]+(,[A-Za-z0-9_.]+)*)$/, "must be 'none' or a comma-separated list of field names")
    .default('code,errorCode,error_code,error,errors')
    .transform((value) => (value === 'none' ? [] : value.split(','))),
  BULKORDER_CUSTOMER_ID_FIELDS: fieldList('customerId,id,customer.id,data.customerId'),
  BULKORDER_LOGIN_URL_FIELDS: fieldList('loginUrl,url,redirectUrl,loginURL,data.loginUrl'),
});
/** Every variable this module reads (the .env.example test checks each is documented). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

/** The parsed variables, before they become a Config. */
export type Parsed = z.infer<typeof schema>;

/** True for a time zone Intl knows (IANA names such as Europe/Amsterdam, and UTC). */
function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** Why a URL is refused, or undefined. http:// only to loopback: credentials must not cross a network in clear. */
function urlProblem(value: string, options: { allowQuery?: boolean } = {}): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must start with https://';
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain credentials';
  if ((parsed.search !== '' && options.allowQuery !== true) || parsed.hash !== '')
    return 'must not have a query or fragment';
  if (parsed.protocol === 'http:' && !isLoopback(parsed.hostname))
    return 'http:// is allowed for loopback hosts only (127.0.0.0/8, ::1, localhost); use https://';
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
  if (!USER_AGENT_FORMAT.test(value))
    return 'must look like <brand>-<CompanyName> (letters and digits, one dash after the brand), e.g. Acme-AcmeTradingBV';
  const brand = value.slice(0, value.indexOf('-')).toLowerCase();
  if (LIBRARY_BRANDS.has(brand)) return `must name your brand and company, not "${brand}"`;
  return undefined;
}

function redisNode(hostPort: string): RedisNode {
  const at = hostPort.lastIndexOf(':');
  return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
}

/** `tab` as the character it names; any other delimiter as written. */
function delimiterChar(value: string): string {
  return value === 'tab' ? '\t' : value;
}
