/**
 * The OAuth2 client-credentials grant (RFC 6749 4.4) against {auth_url}/oauth2/token, with
 * bounded retries. A token request creates nothing, so unlike an order it may be retried
 * at any failure. Neither the secret nor the token ever reaches a log line or an error.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiName, Secret, TokenAuthMethod } from '../config.js';
import { InfrastructureError, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { classifyOutcome } from './classifyOutcome.js';
import type { HttpTransport } from './httpTransport.js';
import { findField } from './findField.js';
import { redactSecrets } from './redactSecrets.js';

const SECOND = 1000;

/** An access token; `id` is a hash prefix that is safe to log and to compare across processes. */
export interface AccessToken {
  readonly value: string;
  readonly id: string;
  /** Epoch ms, measured from before the request was sent so it is never later than the server's. */
  readonly expiresAt: number;
  readonly lifetimeMs: number;
}

export interface TokenEndpointOptions {
  api: ApiName;
  tokenUrl: string;
  clientId: string;
  clientSecret: Secret;
  userAgent: string;
  /** `body` (the spec's form fields, default) or `basic` (RFC 6749 2.3.1 HTTP Basic). */
  tokenAuth?: TokenAuthMethod;
  transport: HttpTransport;
  logger: Logger;
  /** Attempts before giving up; default 4. */
  attempts?: number;
  /** First backoff; doubles per attempt with jitter; default 250 ms. */
  baseDelayMs?: number;
  /** Longest single backoff (also caps Retry-After); default 5 s. */
  maxDelayMs?: number;
  /** Deadline of one token request; default 15 s. */
  requestDeadlineMs?: number;
  /** Lifetime assumed when `expires_in` is missing or unreadable; default 300 s (short, so we err towards refreshing). */
  defaultLifetimeMs?: number;
  now?: () => number;
}

/** A token endpoint refusal of our credentials: needs a person, retrying cannot help (exit 2). */
class TokenRefusedError extends UsageError {
  constructor(api: ApiName, status: number, reason: string) {
    super(
      'TOKEN_REFUSED',
      `the token endpoint refused the ${api} API credentials (HTTP ${status} ${reason}); check BULKORDER_${api.toUpperCase()}_CLIENT_ID and _SECRET`,
      { details: { api, status } },
    );
  }
}

const ERROR_FIELDS = {
  errorCode: ['error', 'code', 'errorCode'],
  errorMessage: ['error_description', 'message', 'detail'],
  remoteId: [],
};

/** Gets a new token, retrying transient failures with backoff; throws TokenRefusedError or InfrastructureError. */
export async function fetchAccessToken(options: TokenEndpointOptions): Promise<AccessToken> {
  const attempts = options.attempts ?? 4;
  const base = options.baseDelayMs ?? 250;
  const max = options.maxDelayMs ?? 5 * SECOND;
  let last = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const result = await requestOnce(options);
    if ('token' in result) return result.token;
    last = result.reason;
    options.logger.warn({ api: options.api, attempt, attempts, reason: result.reason }, 'token request failed');
    if (attempt < attempts) {
      const backoff = Math.min(max, base * 2 ** (attempt - 1));
      // Equal jitter: processes that failed together do not come back together.
      const delay =
        result.retryAfterMs !== undefined
          ? Math.min(max, result.retryAfterMs)
          : backoff / 2 + Math.random() * (backoff / 2);
      await sleep(delay);
    }
  }
  throw new InfrastructureError(
    'TOKEN_ENDPOINT_UNAVAILABLE',
    `no ${options.api} API token after ${attempts} attempts at ${options.tokenUrl}: ${last}`,
    { details: { api: options.api } },
  );
}

type Attempt = { token: AccessToken } | { reason: string; retryAfterMs?: number };

async function requestOnce(options: TokenEndpointOptions): Promise<Attempt> {
  const now = options.now ?? Date.now;
  const secret = options.clientSecret.reveal();
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    'user-agent': options.userAgent,
  };
  // What an echoing server could hand back: the secret, and the Basic credential that encodes it.
  const secrets = [secret];
  if (options.tokenAuth === 'basic') {
    // RFC 6749 2.3.1: each part form-encoded before base64.
    const basic = Buffer.from(`${formEncode(options.clientId)}:${formEncode(secret)}`).toString('base64');
    headers.authorization = `Basic ${basic}`;
    secrets.push(basic);
  } else {
    form.set('client_id', options.clientId);
    form.set('client_secret', secret);
  }
  const sentAt = now();
  const exchange = await options.transport.send({
    method: 'POST',
    url: options.tokenUrl,
    headers,
    body: form.toString(),
    deadlineMs: options.requestDeadlineMs ?? 15 * SECOND,
  });
  const outcome = classifyOutcome(exchange, { fields: ERROR_FIELDS, now });
  if (outcome.kind === 'delivered') {
    const value = findField(outcome.body, ['access_token']);
    if (value === undefined) return { reason: `HTTP ${outcome.status} without access_token` };
    const tokenType = findField(outcome.body, ['token_type']);
    if (tokenType !== undefined && tokenType.toLowerCase() !== 'bearer')
      return { reason: `unsupported token_type ${tokenType.slice(0, 40)}` };
    const expiresIn = Number(findField(outcome.body, ['expires_in']));
    const lifetimeMs =
      Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * SECOND : (options.defaultLifetimeMs ?? 300 * SECOND);
    return { token: { value, id: tokenId(value), expiresAt: sentAt + lifetimeMs, lifetimeMs } };
  }
  const reason = redactSecrets(`${outcome.code}: ${outcome.message}`, secrets).slice(0, 300);
  if (outcome.kind === 'permanent' || outcome.kind === 'unauthorized') {
    // 400 invalid_client / 401 / 403: our credentials or request are wrong, not the endpoint.
    throw new TokenRefusedError(options.api, outcome.status, reason);
  }
  return {
    reason,
    ...('retryAfterMs' in outcome && outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
  };
}

/** application/x-www-form-urlencoded, as RFC 6749 appendix B asks for Basic credentials. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** A stable, non-reversible name for a token (first 16 hex of its SHA-256). */
function tokenId(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 16);
}
