import { differingParts, type Fingerprint } from './fingerprint.js';
import type { RejectedRecord, ValidRecord } from '../ingest/types.js';

/** Row error code of a key the ledger knows with other content. */
export const ORDER_REF_REUSED = 'ORDER_REF_REUSED';

/** What the ledger says about the earlier use of a key. */
export interface EarlierUse {
  batchId: string;
  /** Delivered at (or last changed at), ms. */
  at: number;
  /** The earlier content's part fingerprints. */
  parts: string;
  /** Its state in words: delivered, held for review, queued or in flight. */
  state?: string;
}

const STATE_WORDS: Record<string, string> = {
  delivered: 'delivered',
  held: 'held for review',
  queued: 'queued',
  sending: 'being sent',
};

/**
 * The sentence a person reads for a reused orderRef: which earlier batch used it, when, and which
 * parts of the order differ (never the values: the ledger keeps no personal data).
 */
export function orderRefReusedMessage(orderRef: string | undefined, earlier: EarlierUse, now: Fingerprint): string {
  const differs = differingParts(earlier.parts, now.parts);
  const what = differs.length > 0 ? `different ${differs.join(' and ')}` : 'different content';
  const when = earlier.at > 0 ? ` on ${new Date(earlier.at).toISOString().slice(0, 10)}` : '';
  const state = earlier.state === undefined ? '' : ` (${STATE_WORDS[earlier.state] ?? earlier.state})`;
  return (
    `orderRef ${orderRef ?? '(none)'} was used before by batch ${earlier.batchId}${when}${state} for an order with ${what}: ` +
    'not sent. Give a new order its own orderRef; if this row corrects the earlier order, contact the service instead.'
  );
}

/** The rejects-file row of a valid record whose key the ledger knows with other content. */
export function conflictRejection<P>(record: ValidRecord<P>, earlier: EarlierUse, now: Fingerprint): RejectedRecord {
  return {
    kind: 'rejected',
    key: record.key,
    file: record.file,
    lines: record.lines,
    ...(record.orderRef === undefined ? {} : { orderRef: record.orderRef }),
    rows: record.rows,
    rowLines: record.rowLines,
    errors: [
      {
        line: record.lines[0] ?? 0,
        code: ORDER_REF_REUSED,
        message: orderRefReusedMessage(record.orderRef, earlier, now),
      },
    ],
  };
}
