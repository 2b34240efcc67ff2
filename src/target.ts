/**
 * Which remote API a configuration points at, and whether that agrees with BULKORDER_ENV.
 *
 * The spec only says that {base_url} differs between Acceptance and Production, not how either
 * looks, so the rule is data: BULKORDER_PRODUCTION_HOSTS and BULKORDER_ACCEPTANCE_HOSTS list host
 * patterns (`api.vendor.nl`, `*.vendor.nl`), and `auto` (the default acceptance list) recognises
 * loopback hosts, the reserved test names (RFC 2606: `.test`, `.example`, `.invalid`, `.localhost`)
 * and host names with an acceptance word as a label or dash-separated part (`acc`, `acceptance`,
 * `accept`, `test`, `staging`, `sandbox`, `uat`). A host matching a production pattern is production,
 * whatever the acceptance list says. Pure: no environment, no I/O.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';

export type HostClass = 'production' | 'acceptance' | 'unknown';

/** Host patterns of each environment, as BULKORDER_PRODUCTION_HOSTS and BULKORDER_ACCEPTANCE_HOSTS give them. */
export interface HostRules {
  readonly production: readonly string[];
  readonly acceptance: readonly string[];
}

/** The pattern that stands for the built-in acceptance rule. */
export const AUTO = 'auto';

const ACCEPTANCE_WORDS = new Set(['acc', 'acceptance', 'accept', 'test', 'staging', 'sandbox', 'uat']);
const RESERVED_TLDS = new Set(['test', 'example', 'invalid', 'localhost']);
const PATTERN = /^(auto|(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/;

/** Why a comma list of host patterns is refused, or undefined. Empty list allowed. */
export function hostListProblem(value: string): string | undefined {
  const bad = splitHostList(value).find((pattern) => !PATTERN.test(pattern));
  return bad === undefined
    ? undefined
    : `'${bad}' is not a host pattern: give host names (api.vendor.nl), *.domain (its subdomains), [IPv6] or auto, comma-separated`;
}

/** `a, B ,c` -> ['a', 'b', 'c']; `none` or empty -> []. */
export function splitHostList(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '' && part !== 'none');
}

/** Production if a production pattern matches; acceptance if an acceptance one does; else unknown. */
export function classifyHost(hostname: string, rules: HostRules): HostClass {
  const host = hostname.toLowerCase();
  if (rules.production.some((pattern) => matches(pattern, host))) return 'production';
  if (rules.acceptance.some((pattern) => (pattern === AUTO ? looksLikeAcceptance(host) : matches(pattern, host))))
    return 'acceptance';
  return 'unknown';
}

function matches(pattern: string, host: string): boolean {
  if (pattern === AUTO) return false;
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1));
  return host === pattern;
}

function looksLikeAcceptance(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1';
  const labels = bare.split('.');
  if (RESERVED_TLDS.has(labels.at(-1) ?? '')) return true;
  return labels.some((label) => label.split('-').some((word) => ACCEPTANCE_WORDS.has(word)));
}

/**
 * The stable short id of one target: environment, API base URL and client id. Every Redis key of
 * that target lives under it, so a ledger filled against one API never answers for another (a new
 * base URL or client id starts a fresh ledger, and so gets every order).
 */
export function targetId(env: string, apiBaseUrl: string, clientId: string): string {
  const url = new URL(apiBaseUrl);
  // origin lower-cases the host and drops a default port; the path keeps /business-api or /cafetariaplan-api.
  const normalized = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  return createHash('sha256').update(`${env}\n${normalized}\n${clientId}`).digest('hex').slice(0, 8);
}

/** One URL variable to check against the environment. */
export interface TargetUrl {
  readonly variable: string;
  readonly url: string;
  /** Where its value came from, for the message (env-file, environment, ...). */
  readonly source: string;
}

/**
 * Why the URLs do not belong to `env`, naming both variables, or undefined when they agree.
 * Under acceptance every URL must be recognised as acceptance (acceptance is the default, so a
 * production URL with a forgotten BULKORDER_ENV must not pass as a test run); under production no
 * URL may be an acceptance one, and when production hosts are listed every URL must be one of them.
 */
export function targetMismatch(
  env: 'acceptance' | 'production',
  envSource: string,
  urls: readonly TargetUrl[],
  rules: HostRules,
): string | undefined {
  for (const { variable, url, source } of urls) {
    const host = new URL(url).hostname;
    const kind = classifyHost(host, rules);
    const said = `BULKORDER_ENV is ${env} (${envSource}) but ${variable} (${source}) is ${url}`;
    if (env === 'acceptance' && kind === 'production') {
      return `${said}, a production host (BULKORDER_PRODUCTION_HOSTS). Set BULKORDER_ENV=production to send real orders, or point ${variable} at the acceptance API.`;
    }
    if (env === 'acceptance' && kind === 'unknown') {
      return `${said}, a host not known as acceptance. If it is the acceptance API, add ${host} to BULKORDER_ACCEPTANCE_HOSTS; if it is production, set BULKORDER_ENV=production (and BULKORDER_PRODUCTION_HOSTS=${host}).`;
    }
    if (env === 'production' && kind === 'acceptance') {
      return `${said}, an acceptance host (BULKORDER_ACCEPTANCE_HOSTS${rules.acceptance.includes(AUTO) ? ', auto' : ''}). Orders recorded as production would not be; point ${variable} at the production API or set BULKORDER_ENV=acceptance.`;
    }
    if (env === 'production' && kind === 'unknown' && rules.production.length > 0) {
      return `${said}, not one of BULKORDER_PRODUCTION_HOSTS (${rules.production.join(',')}). Add it there if it is the production API.`;
    }
  }
  return undefined;
}
