/**
 * Issued access tokens: opaque random strings, each bound to the API it was issued for and
 * kept past expiry so that a late use answers TOKEN_EXPIRED rather than TOKEN_INVALID.
 */
import { randomBytes } from 'node:crypto';
import type { ApiName } from './simulatorTypes.js';

/** Result of checking a bearer token against an API. */
export type TokenCheck = { ok: true } | { ok: false; code: 'TOKEN_INVALID' | 'TOKEN_EXPIRED'; message: string };

// Above this many tokens, expired ones are swept on the next issue; a well-behaved client
// holds one per API, so only a misbehaving one ever gets here.
const SWEEP_ABOVE = 10_000;

/** The tokens one simulator has issued. */
export class TokenRegistry {
  readonly #tokens = new Map<string, { api: ApiName; expiresAt: number }>();

  /** Issues a token for `api` valid until `expiresAt` (epoch ms). */
  issue(api: ApiName, expiresAt: number, now: number): string {
    if (this.#tokens.size > SWEEP_ABOVE) {
      for (const [token, entry] of this.#tokens) if (entry.expiresAt <= now) this.#tokens.delete(token);
    }
    const token = randomBytes(32).toString('base64url');
    this.#tokens.set(token, { api, expiresAt });
    return token;
  }

  /** Checks `token` for a request to `api` at `now`. */
  check(token: string, api: ApiName, now: number): TokenCheck {
    const entry = this.#tokens.get(token);
    if (entry === undefined)
      return { ok: false, code: 'TOKEN_INVALID', message: 'The access token is unknown or revoked.' };
    if (entry.api !== api) {
      return {
        ok: false,
        code: 'TOKEN_INVALID',
        message: `The access token was issued for the ${entry.api} API, not the ${api} API.`,
      };
    }
    if (now >= entry.expiresAt)
      return { ok: false, code: 'TOKEN_EXPIRED', message: 'The access token has expired; request a new one.' };
    return { ok: true };
  }

  /** Forgets every token: each answers TOKEN_INVALID from now on. */
  revokeAll(): void {
    this.#tokens.clear();
  }
}
