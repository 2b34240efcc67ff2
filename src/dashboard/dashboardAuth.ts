import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../config.js';

/** Who is asking, as far as the dashboard can tell. */
export interface Caller {
  /** True when the request carried the configured token (bearer, or basic-auth password). */
  authenticated: boolean;
  /** The basic-auth user name, else `dashboard`: recorded as "by" on review decisions. */
  user: string;
}

/**
 * Authentication and CSRF protection of the dashboard. The token comes from
 * BULKORDER_DASHBOARD_TOKEN (src/config.ts) and is compared in constant time; it is never
 * logged or echoed. Form tokens are an HMAC of the user under a key made at process start,
 * so they need no storage and die with the process.
 */
export class DashboardAuth {
  readonly #formKey = randomBytes(32);
  constructor(private readonly token: Secret | undefined) {}

  /** Without a token nothing is authenticated, so no action is allowed. */
  get configured(): boolean {
    return this.token !== undefined;
  }

  caller(authorization: string | undefined): Caller {
    if (this.token === undefined || authorization === undefined) return { authenticated: false, user: 'dashboard' };
    const [scheme, value = ''] = authorization.split(' ', 2);
    if (scheme?.toLowerCase() === 'bearer')
      return { authenticated: sameText(value.trim(), this.token.reveal()), user: 'dashboard' };
    if (scheme?.toLowerCase() === 'basic') {
      const decoded = Buffer.from(value.trim(), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const user = colon < 0 ? '' : decoded.slice(0, colon);
      const password = colon < 0 ? decoded : decoded.slice(colon + 1);
      return { authenticated: sameText(password, this.token.reveal()), user: safeUser(user) };
    }
    return { authenticated: false, user: 'dashboard' };
  }

  /** The hidden form field every action form carries. */
  formToken(caller: Caller): string {
    return createHmac('sha256', this.#formKey).update(`csrf\n${caller.user}`).digest('base64url');
  }

  checkFormToken(caller: Caller, given: string | undefined): boolean {
    return given !== undefined && sameText(given, this.formToken(caller));
  }
}

/**
 * A browser's cross-site POST carries its own Origin: refuse one that is not this dashboard's.
 * (Requests without Origin are not from a browser form of another site.)
 */
export function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined || origin === '') return true;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function safeUser(user: string): string {
  const cleaned = user
    .replace(/[^\p{L}\p{N}._@ -]/gu, '')
    .slice(0, 64)
    .trim();
  return cleaned === '' ? 'dashboard' : cleaned;
}
