import { hostname, userInfo } from 'node:os';
import { UsageError } from '../errors.js';
import type { Services } from '../services.js';
import {
  cancelBatch,
  listHeldBatches,
  readBatchCircuit,
  releaseBatch,
  type BatchCircuitView,
} from '../batches/batchCircuit.js';
import { localTime } from '../timeText.js';
import { wakeBatchJobs } from '../batches/wakeBatch.js';
import { PutBackChunks } from '../batches/putBackChunks.js';

/** What `batch show --json` prints: the batch's circuit with its counts. */
export interface BatchShow extends BatchCircuitView {
  file: string;
  enqueued: number;
  delivered: number;
  dead: number;
  held: number;
}

/** `bulkorder batch show <batch>`: the batch's circuit (canary, held and why, a person's action) and its counts. */
export async function showBatch<P>(services: Services<P>, batchId: string): Promise<BatchShow> {
  const batch = await services.batches.get(batchId);
  if (batch === undefined)
    throw new UsageError(
      'BATCH_NOT_FOUND',
      `no batch ${batchId} in ${services.env} (${services.kind.cli} status lists recent ones)`,
    );
  const circuit = await readBatchCircuit(services.redis, services.keys, batchId);
  return {
    ...circuit,
    file: batch.file,
    enqueued: batch.enqueued,
    delivered: batch.delivered,
    dead: batch.dead,
    held: batch.held,
  };
}

/**
 * `bulkorder batch cancel|release <batch>`: recorded with who (the OS user and host, or `--by`) and
 * why. Cancel ends every unsent order of the batch as cancelled (the workers settle each when its job
 * comes: BATCH_CANCELLED, nothing sent); release sends the rest regardless of the canary.
 */
export async function actOnBatch<P>(
  services: Services<P>,
  batchId: string,
  action: 'cancel' | 'release',
  who: { by?: string; why?: string },
): Promise<BatchShow> {
  const before = await showBatch(services, batchId);
  if (before.state === 'cancelled')
    throw new UsageError(
      'BATCH_CANCELLED',
      `batch ${batchId} was cancelled already (by ${before.action?.by ?? 'someone'}): nothing left to ${action}`,
    );
  const record = { by: who.by ?? operator(), why: who.why ?? '' };
  if (action === 'cancel') await cancelBatch(services.redis, services.keys, batchId, record);
  else await releaseBatch(services.redis, services.keys, batchId, record);
  // Its chunks rest until near the next probe (up to 15 s): after a person's word they go (or end) now.
  await wakeBatchJobs(services.queue, new PutBackChunks(services.redis, services.keys), batchId);
  return showBatch(services, batchId);
}

/** The held batches with their causes: `status`, the dashboard, and the list of what needs a person. */
export function heldBatches<P>(services: Pick<Services<P>, 'redis' | 'keys'>): Promise<BatchCircuitView[]> {
  return listHeldBatches(services.redis, services.keys);
}

/** The text lines of one batch's circuit (status, batch show), empty while it flows as usual. */
export function describeCircuit(c: BatchCircuitView, cli: string, timeZone = 'UTC'): string[] {
  const probe = c.nextProbeAt === undefined ? '' : `; next probe ${localTime(c.nextProbeAt, timeZone)}`;
  switch (c.state) {
    case 'held':
      return [
        `  HELD by its canary: ${c.refusedCount} refused with ${c.cause ?? 'one cause'}${c.message === undefined ? '' : ` (${c.message})`}; nothing more is sent but a probe${probe}`,
        ...c.samples.map((s) => `    e.g. ${s.orderKey}: ${s.message}`),
        `  act: ${cli} batch release ${c.batchId} (send the rest) | ${cli} batch cancel ${c.batchId} (end it unsent)`,
      ];
    case 'canary':
      return [`  canary: ${c.canaryAnswered} answered, ${c.canaryAccepted} accepted; the rest waits for its verdict`];
    case 'cancelled':
    case 'released':
      return [
        `  ${c.state} by ${c.action?.by ?? 'someone'}${c.action?.why ? ` (${c.action.why})` : ''}${c.action === undefined ? '' : ` at ${localTime(c.action.at, timeZone)}`}`,
      ];
    default:
      return [];
  }
}

/** `batch show` as text. */
export function describeBatchShow(show: BatchShow, cli: string, timeZone = 'UTC'): string {
  const lines = [
    `${show.batchId}  ${show.file}`,
    `  circuit ${show.state}${show.cause === undefined ? '' : `, cause ${show.cause}`}`,
    `  orders queued ${show.enqueued}: ${show.delivered} delivered, ${show.dead} dead-lettered, ${show.held} held; ${show.refusedCount} refused waiting with the batch`,
    ...describeCircuit(show, cli, timeZone),
  ];
  return lines.join('\n') + '\n';
}

function operator(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `someone@${hostname()}`;
  }
}
