/**
 * Reading a ledger entry. The entry is a hash, with short field names to keep it small; the
 * scripts that write it are in src/lua/scripts/ (reserve, claim, settle, release, resolve...):
 *   s state: queued | sending | delivered | dead | held
 *   b batch that queued it, t claim token of the attempt now sending ('' or absent: none), a attempts,
 *   u updated at (ms), r remote order id (encodeRemoteId: keeps its JSON type), h HTTP status,
 *   c error code, m message, d delivered at,
 *   x attempts answered 5xx after the request was sent (the server may have stored the order
 *     before failing: a later delivery is a possible duplicate).
 *   f fingerprint of the content (sha256 of the canonical payload, see fingerprint.ts),
 *   fp the fingerprints of its parts (`recipient=ab12cd34;products=...`), to say what differs,
 *   q the number of the chunk job of batch b it is queued in (absent: an earlier release's job of
 *     one record, the key as its id),
 *   (j the delivery job, in entries written before the kept job moved to `unqueuedJobs`.)
 *   jc 1 while the kept job is of an order its batch counted as queued before (the breaker's
 *     burst requeue): confirming it does not count it again.
 *   rv review action (released | resolved), rw who, rt when (ms), rn note.
 *
 * From reservation until its job is known to be in BullMQ, an order's job ({name, data} JSON) is
 * kept in the `unqueuedJobs` hash under its order key, and the key is in the `unqueued` index
 * (scored by time), so a reconciler can add a job an importer reserved but never queued (it
 * crashed). Not in the entry itself: one value over 64 bytes turns a hash into Redis's large
 * encoding for good (hash-max-listpack-value), and the entry outlives the job by months.
 */
import { decodeRemoteId } from '../delivery/remoteId.js';
import type { LedgerEntry, LedgerState } from './ledgerTypes.js';

/** The mark of a delivered order that an earlier attempt may have stored as well; undefined otherwise. */
export function possibleDuplicate(entry: LedgerEntry | undefined): string | undefined {
  return entry?.state === 'delivered' && (entry.answered5xx ?? 0) > 0 ? POSSIBLE_DUPLICATE : undefined;
}

/** The words of the mark, in results files and batch summaries. */
export const POSSIBLE_DUPLICATE = 'possible duplicate: an earlier attempt was answered 5xx';

/** An entry's hash (HGETALL) as a LedgerEntry; undefined when there is none. */
export function toEntry(raw: Record<string, string>): LedgerEntry | undefined {
  if (raw.s === undefined) return undefined;
  const entry: LedgerEntry = {
    state: raw.s as LedgerState,
    batchId: raw.b ?? '',
    attempts: Number(raw.a ?? 0),
    updatedAt: Number(raw.u ?? 0),
  };
  if (raw.r) entry.remoteId = decodeRemoteId(raw.r);
  if (raw.h) entry.httpStatus = Number(raw.h);
  if (raw.c) entry.code = raw.c;
  if (raw.m) entry.message = raw.m;
  if (raw.d) entry.deliveredAt = Number(raw.d);
  if (raw.f) entry.fingerprint = { hash: raw.f, parts: raw.fp ?? '' };
  if (raw.x) entry.answered5xx = Number(raw.x);
  if (raw.q) entry.chunkId = `${raw.b ?? ''}.${raw.q}`;
  if (raw.rv === 'released' || raw.rv === 'resolved')
    entry.review = { action: raw.rv, by: raw.rw ?? '', at: Number(raw.rt ?? 0), ...(raw.rn ? { note: raw.rn } : {}) };
  return entry;
}
