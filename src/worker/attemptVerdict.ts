import { reasonWithDetails } from '../deadLetter/errorDetails.js';
import type { ParkFacts } from '../deliveryJob.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { RemoteId } from '../delivery/remoteId.js';
import { answeredAfterSending, ORDER_WORDING, type AttemptInfo, type RecordWording } from './deliverOrder.js';

/**
 * What one attempt's answer means for its record, decided in one place for a chunk's records
 * (src/worker/deliverChunk.ts), the same way deliverOrder decides for a job of one record:
 * - `delivered`: settle as delivered.
 * - `dead` / `held`: park with these facts (`answered5xx`: the server answered 5xx after it was sent).
 * - `retry`: back to queued, another attempt after the backoff (spends an attempt).
 * - `rateLimited`: back to queued, the queue paused for `retryAfterMs` (spends no attempt).
 * - `credentials`: back to queued, a 401 with a fresh token: not the record's fault (spends no attempt).
 */
export type Verdict =
  | { next: 'delivered'; status: number; remoteId?: RemoteId }
  /** `log`: the log line's message (the same words as deliverOrder's). */
  | { next: 'dead' | 'held'; facts: ParkFacts; answered5xx: boolean; log: string }
  | { next: 'retry'; answered5xx: boolean; code: string; message: string; retryAfterMs?: number; status?: number }
  | { next: 'rateLimited'; retryAfterMs: number }
  | { next: 'credentials'; status: number; code: string; body?: unknown };

export function verdictOf(outcome: ApiOutcome, attempt: Pick<AttemptInfo, 'attempt' | 'maxAttempts'>, policy: 'hold' | 'resend', wording: RecordWording = ORDER_WORDING): Verdict {
  const noun = wording.noun;
  switch (outcome.kind) {
    case 'delivered':
      return { next: 'delivered', status: outcome.status, ...(outcome.remoteId === undefined ? {} : { remoteId: outcome.remoteId }) };
    case 'ambiguous': {
      if (policy === 'resend') return { next: 'retry', answered5xx: answeredAfterSending(outcome.status), code: outcome.code, message: outcome.message };
      const reason = `Sent, but no answer came (${outcome.code}: ${outcome.message}). The ${noun} may or may not exist on the service.`;
      return { next: 'held', answered5xx: false, log: 'held for review: sent without an answer', facts: { reason, code: outcome.code, message: outcome.message, ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }) } };
    }
    case 'rateLimited':
      return { next: 'rateLimited', retryAfterMs: outcome.retryAfterMs };
    case 'retry': {
      const answered5xx = answeredAfterSending(outcome.status);
      if (attempt.attempt >= attempt.maxAttempts) {
        const reason = `Gave up after ${attempt.attempt} attempts; the last failure was ${outcome.code}: ${outcome.message}.`;
        return { next: 'dead', answered5xx, log: 'dead-lettered: retries exhausted', facts: { reason, code: outcome.code, message: outcome.message, body: outcome.body, ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }) } };
      }
      return {
        next: 'retry',
        answered5xx,
        code: outcome.code,
        message: outcome.message,
        ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }),
        ...(outcome.status === undefined ? {} : { status: outcome.status }),
      };
    }
    case 'unauthorized':
      return { next: 'credentials', status: outcome.status, code: outcome.code, body: outcome.body };
    case 'permanent': {
      const reason = wording.refusal?.(outcome) ?? `The API refused the ${noun}: HTTP ${outcome.status} ${outcome.code}: ${outcome.message}`;
      return {
        next: 'dead',
        answered5xx: false,
        log: 'dead-lettered: refused by the API',
        facts: { reason, httpStatus: outcome.status, code: outcome.code, message: reasonWithDetails(outcome.message, outcome.body), body: outcome.body, bodyTruncated: outcome.bodyTruncated },
      };
    }
  }
}
