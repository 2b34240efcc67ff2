/**
 * One undici Agent (a keep-alive Pool per origin) with explicit timeouts and an overall
 * deadline. It sends one request and reports what happened, including whether the request
 * was ever written to a socket: that fact, not the error's name, decides later whether a
 * failed POST is safe to send again. It never retries anything itself (STYLE habit 5).
 */
import { Agent, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { HttpSettings } from '../config.js';

const KIB = 1024;

/** Options of {@link createHttpTransport}; timeouts come from Config.http. */
export interface HttpTransportOptions extends HttpSettings {
  /** Error bodies (status >= 300) kept up to this many bytes, the rest discarded; default 16 KiB. */
  maxErrorBodyBytes?: number;
  /** Success bodies kept up to this many bytes; default 1 MiB. */
  maxSuccessBodyBytes?: number;
  /** Bytes past the cap read and dropped to keep the connection reusable, then it is closed; default 64 KiB. */
  maxDiscardBytes?: number;
  /** Open connections per origin; default 64. Workers' concurrency bounds what is in flight anyway. */
  connectionsPerOrigin?: number;
  /** Idle keep-alive; default 4 s, below the usual 5 s of servers so we rarely reuse a socket they are closing. */
  keepAliveTimeoutMs?: number;
}

export interface HttpRequest {
  method: 'POST' | 'GET';
  /** Absolute URL. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The caller's cancellation (shutdown); the transport adds its own deadline. */
  signal?: AbortSignal | undefined;
  /** Overrides the transport's deadline for this request (the token endpoint uses a shorter one). */
  deadlineMs?: number;
}

/** The answer came, at least its status line. */
export interface HttpResponse {
  type: 'response';
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed JSON when the body is JSON, else the raw text; undefined when empty. */
  body: unknown;
  bodyTruncated: boolean;
  /** Set when the status arrived but the body did not complete (timeout, reset). */
  bodyError?: Error;
}

/** No status line came. `requestStarted` false proves not one byte of the request was written. */
export interface HttpFailure {
  type: 'failure';
  requestStarted: boolean;
  error: Error;
}

export type HttpExchange = HttpResponse | HttpFailure;

export interface HttpTransport {
  send(request: HttpRequest): Promise<HttpExchange>;
  close(): Promise<void>;
}

/** Reason given to the request when the caller's signal aborts it (shutdown). */
class CallerAbortError extends Error {
  readonly code = 'BULKORDER_ABORTED';
  constructor(reason: unknown) {
    super(`cancelled by the caller: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`);
    this.name = 'CallerAbortError';
  }
}

/** Reason given to the request when the overall deadline passes. */
class DeadlineExceededError extends Error {
  readonly code = 'BULKORDER_DEADLINE';
  constructor(ms: number) {
    super(`no complete answer within the ${ms} ms deadline`);
    this.name = 'DeadlineExceededError';
  }
}

export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const agent = new Agent({
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 4000,
    connections: options.connectionsPerOrigin ?? 64,
    // No pipelining: a POST shares its socket with nothing, so a reset is about that POST alone.
    pipelining: 1,
  });
  const caps = {
    error: options.maxErrorBodyBytes ?? 16 * KIB,
    success: options.maxSuccessBodyBytes ?? 1024 * KIB,
    discard: options.maxDiscardBytes ?? 64 * KIB,
  };
  return {
    send: (request) => sendOnce(agent, request, request.deadlineMs ?? options.deadlineMs, caps),
    close: () => agent.close(),
  };
}

function sendOnce(
  agent: Agent,
  request: HttpRequest,
  deadlineMs: number,
  caps: { error: number; success: number; discard: number },
): Promise<HttpExchange> {
  return new Promise<HttpExchange>((resolve) => {
    const url = parsedUrl(request.url);
    let settled = false;
    let started = false;
    let controller: Dispatcher.DispatchController | undefined;
    let abortReason: Error | undefined;
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let kept = 0;
    let dropped = 0;
    let truncated = false;
    let cappedOut = false;

    const finish = (exchange: HttpExchange): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onCallerAbort);
      resolve(exchange);
    };
    const response = (bodyError?: Error): HttpResponse => ({
      type: 'response',
      status,
      headers,
      body: decodeBody(Buffer.concat(chunks), headers['content-type']),
      bodyTruncated: truncated || bodyError !== undefined,
      ...(bodyError === undefined ? {} : { bodyError }),
    });
    const abort = (reason: Error): void => {
      abortReason ??= reason;
      if (controller !== undefined) {
        controller.abort(reason);
      } else {
        // Not yet on a socket: onRequestStart will abort it before a byte is written.
        finish({ type: 'failure', requestStarted: false, error: reason });
      }
    };
    const onCallerAbort = (): void => abort(new CallerAbortError(request.signal?.reason));
    const timer = setTimeout(() => abort(new DeadlineExceededError(deadlineMs)), deadlineMs);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(ctl) {
        controller = ctl;
        if (abortReason !== undefined) {
          ctl.abort(abortReason);
          return;
        }
        // From here on bytes may reach the server: a failure is no longer provably harmless.
        started = true;
      },
      onResponseStart(_ctl, statusCode, responseHeaders) {
        status = statusCode;
        headers = responseHeaders;
      },
      onResponseData(ctl, chunk) {
        const cap = status >= 200 && status < 300 ? caps.success : caps.error;
        const room = cap - kept;
        if (room > 0) {
          const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
          chunks.push(part);
          kept += part.length;
          if (part.length < chunk.length) truncated = true;
          dropped += chunk.length - part.length;
        } else {
          truncated = true;
          dropped += chunk.length;
        }
        if (dropped > caps.discard && !cappedOut) {
          cappedOut = true;
          ctl.abort(new Error('response body over the cap'));
        }
      },
      onResponseEnd() {
        finish(response());
      },
      onResponseError(_ctl, error) {
        if (cappedOut) finish(response());
        else if (status !== 0) finish(response(abortReason ?? error));
        else finish({ type: 'failure', requestStarted: started, error: abortReason ?? error });
      },
    };

    if (request.signal?.aborted) {
      onCallerAbort();
      return;
    }
    request.signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      agent.dispatch(
        {
          origin: url.origin,
          path: url.path,
          method: request.method,
          headers: request.headers,
          body: request.body ?? null,
        },
        handler,
      );
    } catch (error) {
      finish({ type: 'failure', requestStarted: false, error: asError(error, 'dispatch refused') });
    }
  });
}

/** The last URL sent to, parsed: a worker posts every request to the same one. */
let lastUrl: { text: string; origin: string; path: string } | undefined;

function parsedUrl(text: string): { origin: string; path: string } {
  if (lastUrl?.text === text) return lastUrl;
  const url = new URL(text);
  lastUrl = { text, origin: url.origin, path: url.pathname + url.search };
  return lastUrl;
}

/** One decoder for every answer: decode() without `stream` keeps nothing between calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: false });

function decodeBody(bytes: Buffer, contentType: string | string[] | undefined): unknown {
  if (bytes.length === 0) return undefined;
  const text = UTF8.decode(bytes);
  const type = Array.isArray(contentType) ? contentType.join(',') : (contentType ?? '');
  const trimmed = text.trimStart();
  if (/\bjson\b/i.test(type) || trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text; // truncated or not JSON after all: keep it raw for the dead letter
    }
  }
  return text;
}

function asError(value: unknown, fallback: string): Error {
  return value instanceof Error ? value : new Error(value === undefined ? fallback : String(value));
}
