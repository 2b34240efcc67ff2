import { reasonWithDetails } from '../delivery/errorDetails.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { RemoteId } from '../delivery/remoteId.js';
import type { ParkFacts } from '../deliveryJob.js';
import { ORDER_WORDING, type RecordWording } from '../kinds/recordWording.js';

/**
 * What one attempt's answer means for its record, decided once for each record of a delivery job
 * (src/worker/deliverChunk.ts):
 * - `delivered`: settle as delivered.
 * - `dead` / `held`: park with these facts (`answered5xx`: the server answered 5xx after it was sent).
 * - `retry`: back to queued, another attempt after the backoff (spends an attempt, unless the breaker
 *   holds the job back: src/worker/deliverChunk.ts endChunk); `unanswered`: sent without an answer and
 *   sent again by choice (BULKORDER_AMBIGUOUS=resend), while the record has been sent fewer than
 *   `maxAttempts` times in all.
 * - `rateLimited`: back to queued, every worker slows down, the job waits `retryAfterMs` (spends no attempt).
 * - `credentials`: back to queued, a 401 with a fresh token: not the record's fault (spends no attempt).
 * - `deferred`: back to queued, refused while its batch's canary judges the batch, or while the batch
 *   is held (src/worker/batchCanary.ts): it waits with its batch, never dead-lettered for it.
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
  | { next: 'credentials'; status: number; code: string; body?: unknown }
  | { next: 'deferred'; status: number; code: string; message: string };

/**
 * `attempt`: the job's attempt and its maximum, and `sends`, how many times the record has been sent,
 * this time included (its ledger entry's count, from its claim): a job the breaker held back spent no
 * attempt, but each of its sends counts.
 */
export function verdictOf(
  outcome: ApiOutcome,
  attempt: { attempt: number; maxAttempts: number; sends: number },
  policy: 'hold' | 'resend',
  wording: RecordWording = ORDER_WORDING,
): Verdict {
  switch (outcome.kind) {
    case 'delivered':
      return {
        next: 'delivered',
        status: outcome.status,
        ...(outcome.remoteId === undefined ? {} : { remoteId: outcome.remoteId }),
      };
    case 'ambiguous':
      return unansweredVerdict(outcome, attempt, policy, wording);
    case 'errorBody':
      return errorBodyVerdict(outcome, wording);
    case 'rateLimited':
      return { next: 'rateLimited', retryAfterMs: outcome.retryAfterMs };
    case 'retry':
      return failedVerdict(outcome, attempt);
    case 'unauthorized':
      return { next: 'credentials', status: outcome.status, code: outcome.code, body: outcome.body };
    case 'permanent':
      return refusedVerdict(outcome, wording);
  }
}

/** One kind of the API's outcome. */
type OutcomeOf<K extends ApiOutcome['kind']> = Extract<ApiOutcome, { kind: K }>;

/**
 * Sent, but no answer came: sent again under `resend` while sends and attempts remain, else held for
 * a person (under `hold` at once).
 */
function unansweredVerdict(
  outcome: OutcomeOf<'ambiguous'>,
  attempt: { attempt: number; maxAttempts: number; sends: number },
  policy: 'hold' | 'resend',
  wording: RecordWording,
): Verdict {
  // At least once, at most `maxAttempts` sends of the record: each unanswered send may have stored it,
  // so the last one (or one on the job's last attempt) is held for a person, as under `hold`.
  if (policy === 'resend' && attempt.sends < attempt.maxAttempts && attempt.attempt < attempt.maxAttempts)
    return {
      next: 'retry',
      unanswered: true,
      answered5xx: answeredAfterSending(outcome.status, undefined),
      code: outcome.code,
      message: outcome.message,
    };
  const reason = `Sent, but no answer came (${outcome.code}: ${outcome.message}). The ${wording.noun} may or may not exist on the service.`;
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

/**
 * A 2xx that says it failed: not delivered (no remote id), not refused either (2xx). A person reads
 * the body kept with it and releases or purges; nothing is sent again on its own.
 */
function errorBodyVerdict(outcome: OutcomeOf<'errorBody'>, wording: RecordWording): Verdict {
  const noun = wording.noun;
  return {
    next: 'held',
    answered5xx: false,
    log: 'held for review: a 2xx answer whose body is an error',
    facts: {
      reason: `The API answered HTTP ${outcome.status} but its body is an error (${outcome.code}: ${outcome.message}) and names no ${noun} id: the ${noun} may or may not exist on the service.`,
      code: 'ERROR_BODY_2XX',
      httpStatus: outcome.status,
      message: reasonWithDetails(outcome.message, outcome.body),
      body: outcome.body,
      bodyTruncated: outcome.bodyTruncated,
    },
  };
}

/** A failure worth another attempt (5xx, no connection): retried, or dead-lettered on the job's last attempt. */
function failedVerdict(outcome: OutcomeOf<'retry'>, attempt: { attempt: number; maxAttempts: number }): Verdict {
  const answered5xx = answeredAfterSending(outcome.status, outcome.retryAfterMs);
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

/** Refused by the API (4xx other than 401 and 429): dead-lettered, in the record kind's words when it has them. */
function refusedVerdict(outcome: OutcomeOf<'permanent'>, wording: RecordWording): Verdict {
  const reason =
    wording.refusal?.(outcome) ??
    `The API refused the ${wording.noun}: HTTP ${outcome.status} ${outcome.code}: ${outcome.message}`;
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

/**
 * The verdict on a record its claim found `sending` under an earlier claim: held for review, never
 * posted blindly, since that attempt may or may not have reached the API.
 */
export function staleVerdict(wording: RecordWording = ORDER_WORDING): Verdict {
  const reason =
    `An earlier attempt was sending this ${wording.noun} when its worker stopped (crash, kill or lost lock): it may or may not ` +
    `have reached the API. ${wording.heldHint}`;
  return {
    next: 'held',
    answered5xx: false,
    log: 'held for review: a previous attempt may have sent it',
    facts: { reason, code: 'OUTCOME_UNKNOWN' },
  };
}

/**
 * The verdict on a record whose ledger entry vanished while its job waited (an evicting or forgetful
 * Redis): it may have been delivered before, so it is held for review, never sent (REDIS_KEYS_VANISHED).
 */
export function vanishedVerdict(wording: RecordWording = ORDER_WORDING): Verdict {
  const reason =
    `Its ledger entry vanished from Redis (evicted or lost) while its job waited: it may have been delivered before, so it was not sent. ` +
    `Set maxmemory-policy noeviction, check the service for it, then resolve or release it. ${wording.heldHint}`;
  return {
    next: 'held',
    answered5xx: false,
    log: 'held for review: its ledger entry vanished from Redis (REDIS_KEYS_VANISHED)',
    facts: { reason, code: 'REDIS_KEYS_VANISHED', message: 'ledger entry vanished from Redis (evicted or lost)' },
  };
}

/**
 * The verdict on a record of a batch a person cancelled (`bulkorder batch cancel`): ended without
 * being sent, dead-lettered with BATCH_CANCELLED so its results row and the dead letters say so.
 */
export function cancelledVerdict(batchId: string, wording: RecordWording = ORDER_WORDING): Verdict {
  const reason = `Not sent: its batch was cancelled (bulkorder batch show ${batchId} says by whom and why). The ${wording.noun} was never sent to the API.`;
  return {
    next: 'dead',
    answered5xx: false,
    log: 'not sent: its batch was cancelled',
    facts: { reason, code: 'BATCH_CANCELLED', message: 'its batch was cancelled' },
  };
}

/**
 * Whether the server may have stored what it answered 5xx to (a possible duplicate if a later attempt
 * is delivered). A 5xx status line proves the request reached the server ("stored, then 500" looks the
 * same as "failed, then 500"), except a 503 with Retry-After: the server says it did not process the
 * request and when to come back (RFC 9110 15.6.4), as a 429 does (never counted here). A retry without
 * a status never reached a server (connect refused, request never written, token endpoint down).
 * 500, 502 and 504 stay "possible".
 */
function answeredAfterSending(status: number | undefined, retryAfterMs: number | undefined): boolean {
  if (status === undefined || status < 500) return false;
  return !(status === 503 && retryAfterMs !== undefined);
}
