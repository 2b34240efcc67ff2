/**
 * How the simulator writes answers. Handlers return an {@link Answer}
 * instead of writing to the response, so faults can replace or withhold it after the fact
 * (stored-then-500, never answered, scripted).
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
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

/** The API error body `{ code, message, details? }`; `extra.headers`, the answer's headers (Retry-After). */
export function apiError(
  status: number,
  code: string,
  message: string,
  extra: { details?: unknown[]; headers?: Record<string, string> } = {},
): Answer {
  const { details, headers } = extra;
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
