import type { MiddlewareHandler } from 'hono';
import { sameOrigin, type Caller, type DashboardAuth } from './dashboardAuth.js';
import type { HostCheck } from './hostCheck.js';
import { BOARD_PATH, isSafeBoardAction } from './queueBoard.js';

/** The dashboard's Hono environment: each request's caller, set by accessGuard. */
export type DashboardEnv = { Variables: { caller: Caller } };

// Probes only: they say whether the process and Redis are fit, nothing about orders. /metrics names
// batches' states and error codes, so it needs the token like every page (README: Dashboard).
export const OPEN_PATHS = new Set(['/healthz', '/readyz']);

/** What the guards check a request against. */
export interface GuardSettings {
  auth: DashboardAuth;
  /** Hide and refuse every action. */
  readOnly: boolean;
}

/**
 * Every request but the probes: a Host the dashboard serves (DNS rebinding), the token when one is
 * set, the security headers; a POST also needs a token, a form token of this process and the same origin.
 */
export function accessGuard({
  auth,
  hosts,
  readOnly,
}: GuardSettings & { hosts: HostCheck }): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    if (OPEN_PATHS.has(c.req.path)) return next();
    // Without a Host header (in-process requests), the URL's host: a browser, the rebinding attacker's tool, always sends one.
    if (!hosts.allows(c.req.header('host') ?? new URL(c.req.url).host)) {
      return c.text(
        'Misdirected request: this dashboard does not serve that host name (add it to BULKORDER_DASHBOARD_HOSTS if it is yours).',
        421,
      );
    }
    const caller = auth.caller(c.req.header('authorization'));
    if (auth.configured && !caller.authenticated) {
      return c.text(
        'Authentication required: the dashboard token (BULKORDER_DASHBOARD_TOKEN) as bearer token or basic-auth password.',
        401,
        { 'www-authenticate': 'Basic realm="bulkorder", charset="UTF-8"' },
      );
    }
    c.set('caller', caller);
    c.header('x-frame-options', 'DENY');
    c.header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'",
    );
    c.header('referrer-policy', 'same-origin');
    c.header('cache-control', 'no-store');
    if (c.req.method === 'POST') {
      if (readOnly) return c.text('Refused: the dashboard runs with --read-only.', 403);
      if (!auth.configured || !caller.authenticated)
        return c.text('Refused: actions need BULKORDER_DASHBOARD_TOKEN.', 401);
      if (!sameOrigin(c.req.header('origin'), c.req.header('host')))
        return c.text('Refused: cross-origin request.', 403);
      // An upload's body is the file itself, streamed to the spool: its form token comes in a header.
      const given =
        c.req.path === '/upload/file'
          ? c.req.header('x-bulkorder-form-token')
          : one((await c.req.parseBody({ all: true }))._csrf);
      if (!auth.checkFormToken(caller, given))
        return c.text('Refused: missing or stale form token; reload the page and try again.', 403);
    }
    return next();
  };
}

/** Bull Board's requests: its own CSP; of its actions only promoting a delayed job, by a caller who may act. */
export function boardGuard({ auth, readOnly }: GuardSettings): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    // Its page loads its own scripts and styles from /queues/static, and calls /queues/api.
    c.header(
      'content-security-policy',
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src 'self' data:; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'",
    );
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    if (readOnly) return c.text('Refused: the dashboard runs with --read-only.', 403);
    const caller = c.get('caller');
    if (!auth.configured || !caller.authenticated)
      return c.text('Refused: actions need BULKORDER_DASHBOARD_TOKEN.', 401);
    // Bull Board's actions are PUT and PATCH (no form can send those across sites without a CORS preflight,
    // which this server never grants) and one POST, which the form-token check above already refuses.
    if (!sameOrigin(c.req.header('origin'), c.req.header('host'))) return c.text('Refused: cross-origin request.', 403);
    if (!isSafeBoardAction(c.req.method, c.req.path.slice(BOARD_PATH.length)))
      return c.text(
        'Refused: in bulkorder only promoting a delayed job is allowed here; removing, cleaning, retrying or editing jobs would go around the delivery ledger (README "Run it with your stack").',
        403,
      );
    return next();
  };
}

/** The form value of a request body: one string, or undefined. */
type FormValue = string | File | (string | File)[] | undefined;

export function one(value: FormValue): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}
