import { ParkedStore } from '../deadLetter/parkedStore.js';
import type { ParkedKind } from '../keyspace.js';
import { acknowledgeDuplicates, duplicateCause, listDuplicates } from '../batches/possibleDuplicates.js';
import { heldBatches } from '../services/batchControl.js';
import type { OpenAck, OpenDeps, OpenItem, OpenSource } from './openItem.js';

/** How many recent batches are read for refused files (a file refused weeks ago is in the batch list far down). */
const BATCHES_READ = 500;

/**
 * Every kind of open item, in the order a person meets them in a list. A new kind is one more entry: an OpenSource whose `items` yields what is open of it, with the command that resolves it.
 */
export const OPEN_SOURCES: readonly OpenSource[] = [
  {
    kind: 'dead',
    noun: ['dead letter', 'dead letters'],
    items: (deps) => parkedItems(deps, 'dead'),
  },
  {
    kind: 'held',
    noun: ['held order', 'held orders'],
    items: (deps) => parkedItems(deps, 'held'),
  },
  {
    kind: 'duplicate',
    noun: ['possible duplicate', 'possible duplicates'],
    items: duplicateItems,
    acknowledge: acknowledgeDuplicateItems,
  },
  {
    kind: 'file',
    noun: ['refused file', 'refused files'],
    items: refusedFiles,
  },
  {
    kind: 'batch',
    noun: ['held batch', 'held batches'],
    items: heldBatchItems,
  },
];

/** What a dead letter's code says when a person ended it on purpose: not open, the decision is recorded on its batch. */
const DECIDED_CODES: ReadonlySet<string> = new Set(['BATCH_CANCELLED']);

/** Dead letters or held orders: each parked record not closed yet (a fix removes it, see moveParked.lua). */
async function* parkedItems(deps: OpenDeps, kind: ParkedKind): AsyncGenerator<OpenItem> {
  const { services, cli } = deps;
  const store = new ParkedStore(services.redis, services.keys, services.ledger, kind);
  for await (const { record } of store.scan({}, deps.now)) {
    // `batch cancel` ended these unsent, by a person's decision (who and why on the batch): nothing left to do.
    if (kind === 'dead' && record.code !== undefined && DECIDED_CODES.has(record.code)) continue;
    const answer = [record.httpStatus === undefined ? '' : `HTTP ${record.httpStatus}`, record.code ?? '']
      .filter((part) => part !== '')
      .join(' ');
    yield {
      id: `${kind}:${record.key}`,
      kind,
      since: record.parkedAt,
      subject: record.key,
      batchId: record.batchId,
      cause:
        kind === 'dead'
          ? `${answer || 'refused'}${record.message ? `: ${record.message.slice(0, 120)}` : ''}`
          : `sent without an answer${record.code ? ` (${record.code})` : ''}: may or may not exist on the service`,
      action:
        kind === 'dead'
          ? `fix the cause, then ${cli} dead-letters retry ${record.key} (or export, fix the row and import it again)`
          : `check the service, then ${cli} review release ${record.key} (not there) or ${cli} review resolve ${record.key} --delivered (there)`,
    };
  }
}

/**
 * Orders delivered after an attempt answered 5xx (POSSIBLE_DUPLICATE), not acknowledged yet: a person checks the
 * service for a second copy, then `review duplicates ack` closes them (per batch or all), with who and why.
 */
async function duplicateItems(deps: OpenDeps): Promise<OpenItem[]> {
  const { services, cli } = deps;
  const found = await listDuplicates(
    { redis: services.redis, keys: services.keys, retentionMs: services.ledger.retentionMs },
    { now: deps.now },
  );
  return found.map((d) => ({
    id: `duplicate:${d.orderKey}`,
    kind: 'duplicate',
    since: d.at,
    subject: d.orderKey,
    ...(d.batchId === '' ? {} : { batchId: d.batchId }),
    cause: `delivered after an attempt answered ${duplicateCause(d)}: the service may hold a second copy`,
    action: `check the service for a second copy, then ${cli} review duplicates ack ${d.batchId === '' ? '--all' : `--batch ${d.batchId}`} --by <who> --why "..."`,
  }));
}

/** `open ack duplicate:<key>`: as `review duplicates ack` does, off the index, who and why in the batch's history. */
async function acknowledgeDuplicateItems(deps: OpenDeps, items: readonly OpenItem[], ack: OpenAck): Promise<void> {
  const { services } = deps;
  await acknowledgeDuplicates(
    { redis: services.redis, keys: services.keys, retentionMs: services.ledger.retentionMs },
    items.map((item) => ({ orderKey: item.subject, batchId: item.batchId ?? '', at: item.since })),
    { by: ack.by, why: ack.note },
    ack.at,
  );
}

/** Imports that failed (the file was refused) and were not followed by a good import of the same file. */
async function refusedFiles(deps: OpenDeps): Promise<OpenItem[]> {
  const batches = await deps.services.batches.list(BATCHES_READ);
  // Most recent first: a file imported well after its refusal closes the refusal.
  const importedLater = new Set<string>();
  const open: OpenItem[] = [];
  for (const batch of batches) {
    if (batch.importState === 'imported') importedLater.add(batch.file);
    if (batch.importState !== 'failed' || importedLater.has(batch.file)) continue;
    open.push({
      id: `file:${batch.id}`,
      kind: 'file',
      since: batch.startedAt,
      subject: batch.file,
      batchId: batch.id,
      cause:
        batch.failure === undefined ? 'import failed' : `${batch.failure.code}: ${batch.failure.reason.slice(0, 160)}`,
      action: `fix the file, then ${deps.cli} import ${batch.file}`,
    });
  }
  return open;
}

/**
 * Batches their canary held (issue 36): nothing more of them is sent but a probe until the probe is
 * accepted or a person releases or cancels them. One item per batch; releasing or cancelling closes it.
 */
async function heldBatchItems(deps: OpenDeps): Promise<OpenItem[]> {
  const held = await heldBatches(deps.services);
  return Promise.all(
    held.map(async (circuit) => {
      const batch = await deps.services.batches.get(circuit.batchId);
      return {
        id: `batch:${circuit.batchId}`,
        kind: 'batch',
        since: circuit.heldAt ?? batch?.startedAt ?? deps.now,
        subject: batch?.file ?? circuit.batchId,
        batchId: circuit.batchId,
        cause: `held by its canary: refused with ${circuit.cause ?? 'one cause'}${circuit.message === undefined ? '' : ` (${circuit.message.slice(0, 120)})`}; a probe is sent, nothing else`,
        action: `check a refused order (${deps.cli} batch show ${circuit.batchId}), then ${deps.cli} batch release ${circuit.batchId} --why "..." (send the rest) or ${deps.cli} batch cancel ${circuit.batchId} --why "..." (end it unsent)`,
      };
    }),
  );
}
