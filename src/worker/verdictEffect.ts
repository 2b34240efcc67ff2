import { parkedRecord, type DeliveryRecord } from '../deliveryJob.js';
import type { SettleInput } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';
import type { OrderOutcome } from '../metrics/bulkorderMetrics.js';
import type { Verdict } from './verdictOf.js';

/** What applying a verdict to one record records: the ledger's settle, and how the record ended (when it did). */
export interface VerdictEffect {
  settle: SettleInput;
  ended?: OrderOutcome;
}

/** Where a verdict is applied: the claim's token, the attempt, the batch's file and the log line's fields. */
export interface VerdictContext {
  token: string;
  attempt: number;
  file: string;
  logger: Logger;
  facts: Record<string, unknown>;
}

/**
 * The one path from a verdict to its effects, for each record of a delivery job (deliverChunk): the
 * settle the ledger records (delivered, parked with its record, or back to queued) and the log
 * line. How the job then ends is the job's (deliverChunk's endChunk).
 */
export function verdictEffect<P>(verdict: Verdict, record: DeliveryRecord<P>, ctx: VerdictContext): VerdictEffect {
  const { logger, facts } = ctx;
  const base = { orderKey: record.key, batchId: record.batchId, token: ctx.token };
  const queued = (answered5xx: boolean): SettleInput => ({
    ...base,
    state: 'queued',
    ...(answered5xx ? { answered5xx } : {}),
  });
  switch (verdict.next) {
    case 'delivered':
      // At debug: the job's one `chunk done` line at info counts them (one line per record was ~9% of
      // a worker's CPU). Checked first: at info the line's object is never built.
      if (logger.isLevelEnabled('debug'))
        logger.debug({ ...facts, status: verdict.status, remoteId: verdict.remoteId }, 'delivered');
      return {
        settle: { ...base, state: 'delivered', remoteId: verdict.remoteId ?? '', httpStatus: verdict.status },
        ended: 'delivered',
      };
    case 'dead':
    case 'held': {
      const f = verdict.facts;
      logger.warn({ ...facts, outcome: verdict.next, status: f.httpStatus, code: f.code, body: f.body }, verdict.log);
      const settle: SettleInput = {
        ...base,
        state: verdict.next,
        parkedRecord: parkedRecord(record, ctx.file, { kind: verdict.next, facts: f, attempts: ctx.attempt }),
        ...(f.httpStatus === undefined ? {} : { httpStatus: f.httpStatus }),
        ...(f.code === undefined ? {} : { code: f.code }),
        ...(f.message === undefined ? {} : { message: f.message }),
        ...(verdict.answered5xx ? { answered5xx: true } : {}),
      };
      return { settle, ended: verdict.next === 'dead' ? 'dead_lettered' : 'held' };
    }
    case 'retry':
      if (verdict.unanswered)
        logger.warn({ ...facts, code: verdict.code }, 'no answer; sending again (policy: at-least-once)');
      else
        logger.warn(
          { ...facts, status: verdict.status, code: verdict.code, retryAfterMs: verdict.retryAfterMs },
          'temporary failure: will retry',
        );
      // An answer that leaves doubt keeps its status and code on the entry: a later delivery's POSSIBLE_DUPLICATE
      // names them (`review duplicates`). No message: a value over 64 bytes would enlarge the entry for good.
      if (verdict.answered5xx)
        return {
          settle: {
            ...queued(true),
            ...(verdict.status === undefined ? {} : { httpStatus: verdict.status }),
            code: verdict.code.slice(0, 48),
          },
        };
      return { settle: queued(verdict.answered5xx) };
    case 'rateLimited':
      logger.warn(
        { ...facts, status: 429, retryAfterMs: verdict.retryAfterMs },
        'rate limited: every worker slows down; waits its Retry-After',
      );
      return { settle: queued(false) };
    case 'deferred':
      logger.warn(
        { ...facts, status: verdict.status, code: verdict.code },
        'refused while its batch is judged or held: waits with its batch, not dead-lettered',
      );
      return { settle: queued(false) };
    case 'credentials':
      logger.error(
        { ...facts, status: verdict.status, code: verdict.code, body: verdict.body },
        'our credentials were refused even with a fresh token: not dead-lettered',
      );
      return { settle: queued(false) };
  }
}
