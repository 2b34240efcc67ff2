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
  const caps: BodyCaps = {
    error: options.maxErrorBodyBytes ?? 16 * KIB,
    success: options.maxSuccessBodyBytes ?? 1024 * KIB,
    discard: options.maxDiscardBytes ?? 64 * KIB,
  };
  return {
    send: (request) => sendOnce(agent, request, request.deadlineMs ?? options.deadlineMs, caps),
    close: () => agent.close(),
  };
}

/** Body caps in bytes, from HttpTransportOptions: kept on success, kept on error, read past the cap. */
interface BodyCaps {
  error: number;
  success: number;
  discard: number;
}

function sendOnce(agent: Agent, request: HttpRequest, deadlineMs: number, caps: BodyCaps): Promise<HttpExchange> {
  return new Promise<HttpExchange>((resolve) => {
    const url = parsedUrl(request.url);
    new Exchange(request, deadlineMs, caps, resolve).start(agent, url);
  });
}

/**
 * One request in flight, and undici's handler for it: what its callbacks learn (on a socket yet,
 * the status, the body kept within the caps) and the one settlement of its promise, by whichever
 * comes first of the answer, a failure, the deadline and the caller's abort.
 */
class Exchange implements Dispatcher.DispatchHandler {
  readonly #request: HttpRequest;
  readonly #caps: BodyCaps;
  readonly #resolve: (exchange: HttpExchange) => void;
  readonly #timer: NodeJS.Timeout;
  #settled = false;
  #started = false;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #dropped = 0;
  #truncated = false;
  #cappedOut = false;
  /** One function, so the listener added to the caller's signal is the one removed. */
  readonly #onCallerAbort = (): void => this.#abort(new CallerAbortError(this.#request.signal?.reason));

  constructor(request: HttpRequest, deadlineMs: number, caps: BodyCaps, resolve: (exchange: HttpExchange) => void) {
    this.#request = request;
    this.#caps = caps;
    this.#resolve = resolve;
    this.#timer = setTimeout(() => this.#abort(new DeadlineExceededError(deadlineMs)), deadlineMs);
  }

  /** Hands the request to the agent, unless the caller cancelled it already. */
  start(agent: Agent, url: { origin: string; path: string }): void {
    const request = this.#request;
    if (request.signal?.aborted) {
      this.#onCallerAbort();
      return;
    }
    request.signal?.addEventListener('abort', this.#onCallerAbort, { once: true });
    try {
      agent.dispatch(
        {
          origin: url.origin,
          path: url.path,
          method: request.method,
          headers: request.headers,
          body: request.body ?? null,
        },
        this,
      );
    } catch (error) {
      this.#finish({ type: 'failure', requestStarted: false, error: asError(error, 'dispatch refused') });
    }
  }

  onRequestStart(ctl: Dispatcher.DispatchController): void {
    this.#controller = ctl;
    if (this.#abortReason !== undefined) {
      ctl.abort(this.#abortReason);
      return;
    }
    // From here on bytes may reach the server: a failure is no longer provably harmless.
    this.#started = true;
  }

  onResponseStart(_ctl: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(ctl: Dispatcher.DispatchController, chunk: Buffer): void {
    const cap = this.#status >= 200 && this.#status < 300 ? this.#caps.success : this.#caps.error;
    const room = cap - this.#kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.#chunks.push(part);
      this.#kept += part.length;
      if (part.length < chunk.length) this.#truncated = true;
      this.#dropped += chunk.length - part.length;
    } else {
      this.#truncated = true;
      this.#dropped += chunk.length;
    }
    if (this.#dropped > this.#caps.discard && !this.#cappedOut) {
      this.#cappedOut = true;
      ctl.abort(new Error('response body over the cap'));
    }
  }

  onResponseEnd(): void {
    this.#finish(this.#response());
  }

  onResponseError(_ctl: Dispatcher.DispatchController, error: Error): void {
    if (this.#cappedOut) this.#finish(this.#response());
    else if (this.#status !== 0) this.#finish(this.#response(this.#abortReason ?? error));
    else this.#finish({ type: 'failure', requestStarted: this.#started, error: this.#abortReason ?? error });
  }

  /** Settles the promise once; later calls (a late callback, the timer) do nothing. */
  #finish(exchange: HttpExchange): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#request.signal?.removeEventListener('abort', this.#onCallerAbort);
    this.#resolve(exchange);
  }

  /** The answer as received so far; `bodyError` when the body did not complete. */
  #response(bodyError?: Error): HttpResponse {
    return {
      type: 'response',
      status: this.#status,
      headers: this.#headers,
      body: decodeBody(Buffer.concat(this.#chunks), this.#headers['content-type']),
      bodyTruncated: this.#truncated || bodyError !== undefined,
      ...(bodyError === undefined ? {} : { bodyError }),
    };
  }

  /** Stops the request for `reason` (the first reason wins), on its socket or before it gets one. */
  #abort(reason: Error): void {
    this.#abortReason ??= reason;
    if (this.#controller !== undefined) {
      this.#controller.abort(reason);
    } else {
      // Not yet on a socket: onRequestStart will abort it before a byte is written.
      this.#finish({ type: 'failure', requestStarted: false, error: reason });
    }
  }
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
