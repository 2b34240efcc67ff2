/**
 * How the simulator reads request bodies and writes answers. Handlers return an {@link Answer}
 * instead of writing to the response, so faults can replace or withhold it after the fact
 * (stored-then-500, never answered, scripted).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { CounterBoard } from './counterBoard.js';

/** An answer not yet written. */
export interface Answer {
  status: number;
  /** An object is sent as JSON; a string as HTML when it starts with `<`, else as plain text. */
  body?: string | object;
  headers?: Record<string, string>;
  /** Machine code of an error answer, for the counters. */
  code?: string;
}

/** One problem of a payload, as listed in a VALIDATION_FAILED answer. */
export interface Problem {
  path: string;
  problem: string;
}

/** The API error body `{ code, message, details? }`. */
export function apiError(status: number, code: string, message: string, details?: unknown[], headers?: Record<string, string>): Answer {
  const body = details === undefined ? { code, message } : { code, message, details };
  return headers === undefined ? { status, body, code } : { status, body, code, headers };
}

/** Writes `answer` and counts it (admin answers pass no counters: they are not counted). */
export function writeAnswer(res: ServerResponse, answer: Answer, counters: CounterBoard | undefined): void {
  counters?.answer(answer.status, answer.code);
  if (res.destroyed || res.headersSent) return;
  let payload = '';
  let type: string | undefined;
  if (typeof answer.body === 'string') {
    payload = answer.body;
    type = payload.startsWith('<') ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8';
  } else if (answer.body !== undefined) {
    payload = JSON.stringify(answer.body);
    type = 'application/json; charset=utf-8';
  }
  const headers: OutgoingHttpHeaders = { 'content-length': Buffer.byteLength(payload) };
  if (type !== undefined) headers['content-type'] = type;
  if (answer.headers !== undefined) Object.assign(headers, answer.headers);
  res.writeHead(answer.status, headers);
  res.end(payload);
}

/** Outcome of reading a capped body. */
export type BodyRead = { ok: true; body: Buffer } | { ok: false; reason: 'tooLarge' | 'aborted' };

// How much of an oversized body is read and thrown away before answering 413. Closing a socket
// with unread data sends a TCP reset, which can destroy the 413 before the client reads it.
const DRAIN_LIMIT = 16 * 1024 * 1024;

/**
 * Reads the whole request body, up to `cap` bytes. An oversized body is drained (up to a
 * limit) rather than kept, so the 413 the caller sends (with `connection: close`) arrives.
 */
export function readBody(req: IncomingMessage, cap: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (declared > cap + DRAIN_LIMIT) return Promise.resolve({ ok: false, reason: 'tooLarge' });
  return new Promise((resolve) => {
    let chunks: Buffer[] | undefined = declared > cap ? undefined : [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (chunks !== undefined) {
        if (size > cap) chunks = undefined;
        else chunks.push(chunk);
      }
      if (size > cap + DRAIN_LIMIT) {
        cleanup();
        req.pause();
        resolve({ ok: false, reason: 'tooLarge' });
      }
    };
    const onEnd = (): void => {
      cleanup();
      if (chunks === undefined) resolve({ ok: false, reason: 'tooLarge' });
      else resolve({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) });
    };
    const onAbort = (): void => {
      cleanup();
      resolve({ ok: false, reason: 'aborted' });
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    // 'close' before 'end' means the client went away mid-body.
    req.on('close', onAbort);
  });
}

/**
 * Resolves after `ms` milliseconds. The timer is unref'd: an injected delay must not keep a
 * closed simulator's process alive (the open server is what keeps it running).
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
