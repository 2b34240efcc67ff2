/**
 * Every answer (or non-answer) of the remote API is classified here, once (STYLE habit 4).
 * Callers branch on `kind` and log `code`; nothing else inspects statuses or undici errors.
 */
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import type { ResponseFieldSettings } from '../config.js';
import type { ErrorCode } from '../errorCodes.js';
import type { HttpExchange, HttpFailure, HttpResponse } from './httpTransport.js';
import { findField, findValue } from './findField.js';
import type { RemoteId } from './remoteId.js';

const SECOND = 1000;

export type Outcome =
  /** Any 2xx, with or without a body; `remoteId` keeps the JSON type the API gave it. */
  | { kind: 'delivered'; status: number; body: unknown; remoteId?: RemoteId }
  /**
   * A 2xx whose body says it is an error (an error field, no remote id): not recorded delivered,
   * held for a person with the body kept (ERROR_BODY_2XX). `apiCode`/`message`: what the body says.
   */
  | { kind: 'errorBody'; status: number; code: string; message: string; body: unknown; bodyTruncated: boolean }
  /** 5xx and failures where the request provably never left: safe to send again later. */
  | { kind: 'retry'; status?: number; retryAfterMs?: number; code: string; message: string; body?: unknown }
  | { kind: 'rateLimited'; status: 429; retryAfterMs: number; code: string; message: string }
  /** 401 that survived one token refresh: a credentials problem, not an order problem. */
  | { kind: 'unauthorized'; status: number; code: string; message: string; body?: unknown }
  /** Other 4xx (and 3xx): sending it again cannot help. */
  | { kind: 'permanent'; status: number; code: string; message: string; body: unknown; bodyTruncated: boolean }
  /** The request may have reached the server, but no (complete) answer came: never re-sent blindly. */
  | { kind: 'ambiguous'; code: string; message: string; status?: number };

export type OutcomeKind = Outcome['kind'];

export interface ClassifyOptions {
  /** Where the error code, message and remote id are looked for (Config.responseFields). */
  fields: Pick<ResponseFieldSettings, 'errorCode' | 'errorMessage' | 'remoteId'> &
    Partial<Pick<ResponseFieldSettings, 'errorBody'>>;
  /** 429 without a usable Retry-After waits this long; default 5 s. */
  defaultRetryAfterMs?: number;
  /** A longer Retry-After is cut to this; default 1 hour. */
  maxRetryAfterMs?: number;
  /** Clock for Retry-After dates; default Date.now. */
  now?: () => number;
  /**
   * Statuses to treat as ambiguous instead of their class (e.g. 500, 504: a server that stores
   * an order and then fails to answer looks exactly like one that failed before storing it).
   * Default none: the spec calls 5xx temporary, so they are retried.
   */
  ambiguousStatuses?: readonly number[];
}

/**
 * Transport errors by code. `sent` is what the code implies: `never` only ever happens before
 * the request is written (connect, DNS, TLS), `after` only after it. The decision itself uses
 * the transport's `requestStarted` fact, which holds for every code including unknown ones.
 */
export const TRANSPORT_ERRORS: Readonly<Record<string, { code: ErrorCode; sent: 'never' | 'after' | 'either' }>> = {
  ECONNREFUSED: { code: 'CONNECT_REFUSED', sent: 'never' },
  UND_ERR_CONNECT_TIMEOUT: { code: 'CONNECT_TIMEOUT', sent: 'never' },
  ENOTFOUND: { code: 'DNS_NOT_FOUND', sent: 'never' },
  EAI_AGAIN: { code: 'DNS_TEMPORARY_FAILURE', sent: 'never' },
  EHOSTUNREACH: { code: 'HOST_UNREACHABLE', sent: 'never' },
  ENETUNREACH: { code: 'NETWORK_UNREACHABLE', sent: 'never' },
  EADDRNOTAVAIL: { code: 'ADDRESS_NOT_AVAILABLE', sent: 'never' },
  CERT_HAS_EXPIRED: { code: 'TLS_REJECTED', sent: 'never' },
  DEPTH_ZERO_SELF_SIGNED_CERT: { code: 'TLS_REJECTED', sent: 'never' },
  SELF_SIGNED_CERT_IN_CHAIN: { code: 'TLS_REJECTED', sent: 'never' },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { code: 'TLS_REJECTED', sent: 'never' },
  ERR_TLS_CERT_ALTNAME_INVALID: { code: 'TLS_REJECTED', sent: 'never' },
  UND_ERR_HEADERS_TIMEOUT: { code: 'HEADERS_TIMEOUT', sent: 'after' },
  UND_ERR_BODY_TIMEOUT: { code: 'BODY_TIMEOUT', sent: 'after' },
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: { code: 'RESPONSE_INCOMPLETE', sent: 'after' },
  UND_ERR_SOCKET: { code: 'SOCKET_CLOSED', sent: 'either' },
  ECONNRESET: { code: 'CONNECTION_RESET', sent: 'either' },
  EPIPE: { code: 'CONNECTION_RESET', sent: 'either' },
  ETIMEDOUT: { code: 'SOCKET_TIMEOUT', sent: 'either' },
  UND_ERR_CLOSED: { code: 'CLIENT_CLOSED', sent: 'either' },
  UND_ERR_DESTROYED: { code: 'CLIENT_CLOSED', sent: 'either' },
  UND_ERR_ABORTED: { code: 'ABORTED', sent: 'either' },
  ABORT_ERR: { code: 'ABORTED', sent: 'either' },
  BULKORDER_ABORTED: { code: 'ABORTED', sent: 'either' },
  BULKORDER_DEADLINE: { code: 'DEADLINE_EXCEEDED', sent: 'either' },
};

/** Status classes: the first matching row wins. */
const STATUS_TABLE: ReadonlyArray<{
  test: (status: number) => boolean;
  kind: 'delivered' | 'unauthorized' | 'rateLimited' | 'retry' | 'permanent';
}> = [
  { test: (s) => s >= 200 && s < 300, kind: 'delivered' },
  { test: (s) => s === 401, kind: 'unauthorized' },
  { test: (s) => s === 429, kind: 'rateLimited' },
  // 408 and 425: the server says it did not process the request.
  { test: (s) => s === 408 || s === 425, kind: 'retry' },
  { test: (s) => s >= 500, kind: 'retry' },
  { test: () => true, kind: 'permanent' },
];

/** Turns one HTTP exchange into an Outcome. Pure: same exchange and clock, same outcome. */
export function classifyOutcome(exchange: HttpExchange, options: ClassifyOptions): Outcome {
  return exchange.type === 'failure' ? classifyFailure(exchange) : classifyResponse(exchange, options);
}

function classifyFailure(failure: HttpFailure): Outcome {
  const raw = errorCode(failure.error);
  const code = TRANSPORT_ERRORS[raw]?.code ?? 'NETWORK_ERROR';
  const message = failure.error.message.slice(0, 500);
  return failure.requestStarted ? { kind: 'ambiguous', code, message } : { kind: 'retry', code, message };
}

function classifyResponse(response: HttpResponse, options: ClassifyOptions): Outcome {
  const { status, body, bodyTruncated } = response;
  const row = STATUS_TABLE.find((r) => r.test(status));
  const ambiguous = options.ambiguousStatuses?.includes(status) === true;
  if (row?.kind === 'delivered' && !ambiguous) {
    // The status line is the server's verdict: a 2xx whose body broke off is still delivered.
    // Its error code and message are never read: not looked for (once per delivered request).
    const remoteId = findValue(body, options.fields.remoteId) ?? idFromLocation(response.headers);
    if (remoteId === undefined && saysError(body, options.fields.errorBody ?? [])) {
      const code = findField(body, options.fields.errorCode) ?? 'ERROR_BODY_2XX';
      const message = findField(body, options.fields.errorMessage) ?? `HTTP ${status} with an error body`;
      return { kind: 'errorBody', status, code, message, body, bodyTruncated };
    }
    return { kind: 'delivered', status, body, ...(remoteId === undefined ? {} : { remoteId }) };
  }
  const apiCode = findField(body, options.fields.errorCode);
  const code = apiCode ?? `HTTP_${status}`;
  const message = findField(body, options.fields.errorMessage) ?? `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim();
  if (ambiguous) return { kind: 'ambiguous', code, message, status };
  switch (row?.kind) {
    case 'unauthorized':
      return { kind: 'unauthorized', status, code, message, body };
    case 'rateLimited':
      return {
        kind: 'rateLimited',
        status: 429,
        code,
        message,
        retryAfterMs:
          retryAfter(response.headers, options) ??
          rateLimitReset(response.headers, options) ??
          options.defaultRetryAfterMs ??
          5 * SECOND,
      };
    case 'retry': {
      const retryAfterMs = retryAfter(response.headers, options);
      return { kind: 'retry', status, code, message, body, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    }
    default:
      return { kind: 'permanent', status, code, message, body, bodyTruncated };
  }
}

/** Retry-After as delta-seconds or an HTTP date (RFC 9110 10.2.3), capped; undefined when absent or unreadable. */
export function parseRetryAfter(
  value: string | undefined,
  now: number,
  maxMs: number = 3600 * SECOND,
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * SECOND;
  } else {
    // All three HTTP-date forms start with a day name; Date.parse alone would take "-5" for a year.
    if (!/^[A-Za-z]{3}/.test(text)) return undefined;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, maxMs);
}

function retryAfter(headers: IncomingHttpHeaders, options: ClassifyOptions): number | undefined {
  // Typed as a string, but a repeated header arrives as an array.
  const value = headers['retry-after'] as string | string[] | undefined;
  return parseRetryAfter(Array.isArray(value) ? value[0] : value, (options.now ?? Date.now)(), options.maxRetryAfterMs);
}

/**
 * A 429 without Retry-After may say when its window resets in rate-limit headers (the spec shows none:
 * README "A limit that changes"): the IETF draft's `RateLimit: ...;t=<seconds>` or `RateLimit-Reset:
 * <seconds>`, or the common `X-RateLimit-Reset` in seconds or as epoch seconds; undefined when none reads.
 */
function rateLimitReset(
  headers: IncomingHttpHeaders,
  options: Pick<ClassifyOptions, 'now' | 'maxRetryAfterMs'>,
): number | undefined {
  const first = (name: string): string | undefined => {
    const value = headers[name];
    return (Array.isArray(value) ? value[0] : value)?.trim();
  };
  const structured = /;\s*t=(\d+)/.exec(first('ratelimit') ?? '')?.[1];
  const text = structured ?? first('ratelimit-reset') ?? first('x-ratelimit-reset');
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const seconds = Number(text);
  // An epoch second (after 2001) rather than a delay: an hour-long window is 3600, not 10^9.
  const ms = seconds > 1e9 ? Math.max(0, seconds * SECOND - (options.now ?? Date.now)()) : seconds * SECOND;
  return Math.min(ms, options.maxRetryAfterMs ?? 3600 * SECOND);
}

function idFromLocation(headers: IncomingHttpHeaders): string | undefined {
  const location = headers.location;
  if (typeof location !== 'string') return undefined;
  const last = location
    .split('?')[0]
    ?.split('/')
    .filter((part) => part !== '')
    .pop();
  if (last === undefined) return undefined;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** The code of an error, looking through AggregateError (happy eyeballs) and `cause`. */
export function errorCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (current as { errors?: unknown }).errors;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : (current as { cause?: unknown }).cause;
  }
  if (error instanceof Error && error.name === 'AbortError') return 'ABORT_ERR';
  return 'UNKNOWN';
}

/**
 * Whether a 2xx body says it is an error: a JSON object with one of `fields` (dotted names reach
 * nested objects) present and not empty (`null`, `false`, `""`, `[]` and `{}` say nothing).
 * The spec does not show an error-shaped 2xx; the fields are BULKORDER_ERROR_BODY_FIELDS.
 */
function saysError(body: unknown, fields: readonly string[]): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  return fields.some((name) => {
    let value: unknown = body;
    for (const part of name.split('.')) {
      value =
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? (value as Record<string, unknown>)[part]
          : undefined;
    }
    if (value === undefined || value === null || value === false || value === '') return false;
    if (Array.isArray(value)) return value.length > 0;
    if (typeof value === 'object') return Object.keys(value).length > 0;
    return true;
  });
}
