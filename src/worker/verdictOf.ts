import { reasonWithDetails } from '../delivery/errorDetails.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { RemoteId } from '../delivery/remoteId.js';
import type { ParkFacts } from '../deliveryJob.js';
import { ORDER_WORDING, type RecordWording } from '../kinds/recordWording.js';

/**
 * What one attempt's answer means for its record, decided once for a job of one record
 * (deliverRecord) and for each record of a chunk job (src/worker/deliverChunk.ts):
 * - `delivered`: settle as delivered.
 * - `dead` / `held`: park with these facts (`answered5xx`: the server answered 5xx after it was sent).
 * - `retry`: back to queued, another attempt after the backoff (spends an attempt); `unanswered`: sent
 *   without an answer and sent again by choice (BULKORDER_AMBIGUOUS=resend).
 * - `rateLimited`: back to queued, every worker slows down, the job waits `retryAfterMs` (spends no attempt).
 * - `credentials`: back to queued, a 401 with a fresh token: not the record's fault (spends no attempt).
 */
export type Verdict =
  | { next: 'delivered'; status: number; remoteId?: RemoteId }
  /** `log`: the log line's message. */
  | { next: 'dead' | 'held'; facts: ParkFacts; answered5xx: boolean; log: string }
  | {
      next: 'retry';
      answered5xx: boolean;
      code: string;
      message: string;
      retryAfterMs?: number;
      status?: number;
      unanswered?: true;
    }
  | { next: 'rateLimited'; retryAfterMs: number }
  | { next: 'credentials'; status: number; code: string; body?: unknown };

export function verdictOf(
  outcome: ApiOutcome,
  attempt: { attempt: number; maxAttempts: number },
  policy: 'hold' | 'resend',
  wording: RecordWording = ORDER_WORDING,
): Verdict {
  const noun = wording.noun;
  switch (outcome.kind) {
    case 'delivered':
      return {
        next: 'delivered',
        status: outcome.status,
        ...(outcome.remoteId === undefined ? {} : { remoteId: outcome.remoteId }),
      };
    case 'ambiguous': {
      if (policy === 'resend')
        return {
          next: 'retry',
          unanswered: true,
          answered5xx: answeredAfterSending(outcome.status),
          code: outcome.code,
          message: outcome.message,
        };
      const reason = `Sent, but no answer came (${outcome.code}: ${outcome.message}). The ${noun} may or may not exist on the service.`;
      return {
        next: 'held',
        answered5xx: false,
        log: 'held for review: sent without an answer',
        facts: {
          reason,
          code: outcome.code,
          message: outcome.message,
          ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }),
        },
      };
    }
    case 'rateLimited':
      return { next: 'rateLimited', retryAfterMs: outcome.retryAfterMs };
    case 'retry': {
      const answered5xx = answeredAfterSending(outcome.status);
      const status = outcome.status === undefined ? {} : { status: outcome.status };
      if (attempt.attempt >= attempt.maxAttempts) {
        const reason = `Gave up after ${attempt.attempt} attempts; the last failure was ${outcome.code}: ${outcome.message}.`;
        return {
          next: 'dead',
          answered5xx,
          log: 'dead-lettered: retries exhausted',
          facts: {
            reason,
            code: outcome.code,
            message: outcome.message,
            body: outcome.body,
            ...(outcome.status === undefined ? {} : { httpStatus: outcome.status }),
          },
        };
      }
      return {
        next: 'retry',
        answered5xx,
        code: outcome.code,
        message: outcome.message,
        ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }),
        ...status,
      };
    }
    case 'unauthorized':
      return { next: 'credentials', status: outcome.status, code: outcome.code, body: outcome.body };
    case 'permanent': {
      const reason =
        wording.refusal?.(outcome) ??
        `The API refused the ${noun}: HTTP ${outcome.status} ${outcome.code}: ${outcome.message}`;
      // The API's details (which field, which product) travel into the ledger, so the results file shows them.
      return {
        next: 'dead',
        answered5xx: false,
        log: 'dead-lettered: refused by the API',
        facts: {
          reason,
          httpStatus: outcome.status,
          code: outcome.code,
          message: reasonWithDetails(outcome.message, outcome.body),
          body: outcome.body,
          bodyTruncated: outcome.bodyTruncated,
        },
      };
    }
  }
}

/** Why a record found `sending` under an earlier claim is held: that attempt may or may not have reached the API. */
export function staleFacts(wording: RecordWording = ORDER_WORDING): ParkFacts & { reason: string } {
  const reason =
    `An earlier attempt was sending this ${wording.noun} when its worker stopped (crash, kill or lost lock): it may or may not ` +
    `have reached the API. ${wording.heldHint}`;
  return { reason, code: 'OUTCOME_UNKNOWN' };
}

/**
 * A 5xx status line proves the request reached the server ("stored, then 500" looks the same as
 * "failed, then 500"); a retry without a status never left (connect refused, token endpoint down).
 */
function answeredAfterSending(status: number | undefined): boolean {
  return status !== undefined && status >= 500;
}
