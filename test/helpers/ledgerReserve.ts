import type {
  ChunkClaim,
  ClaimGate,
  ClaimRefused,
  Ledger,
  ReserveResult,
  SettleInput,
  SettleOutcome,
} from '../../src/ledger/ledger.js';
import { chunkJobId } from '../../src/queues.js';

/**
 * Ledger tests' shorthand for one record at a time, through the product's only paths: each key
 * reserved into a chunk of one of its own (`<batch>.<n>`, with a stand-in job kept), claimed by the
 * chunk its entry names, settled in a settle of one.
 */

let chunks = 0;

/** Reserves keys the way every product path does (a kept job), each in a chunk of one with a stand-in job. */
export async function reserveKeys(
  ledger: Ledger,
  orderKeys: readonly string[],
  batchId: string,
  force: boolean,
): Promise<ReserveResult[]> {
  const reserved = await ledger.reserveChunks(
    orderKeys.map((orderKey) => [{ orderKey, record: { key: orderKey } }]),
    orderKeys.map(() => chunkJobId(batchId, ++chunks)),
    { name: 'test-job', layout: undefined },
    { batchId, force },
  );
  return reserved.map(([result]) => result!);
}

/** The jobs of these keys' chunks are in BullMQ (as their importer says after reserveKeys): confirms them. */
export async function confirmKeys(ledger: Ledger, orderKeys: readonly string[], batchId: string): Promise<number> {
  const entries = await ledger.getMany(orderKeys);
  return ledger.confirmChunks(
    orderKeys.map((orderKey, i) => ({ chunkId: entries[i]?.chunkId ?? orderKey, orderKeys: [orderKey] })),
    batchId,
  );
}

/** One attempt's claim of a key by the job its entry names (claimMany of one record). */
export async function claimKey(
  ledger: Ledger,
  orderKey: string,
  token: string,
  gate?: ClaimGate,
): Promise<(ChunkClaim & { trial?: true }) | ClaimRefused> {
  const chunkId = (await ledger.get(orderKey))?.chunkId ?? '';
  const claim = await ledger.claimMany([orderKey], token, chunkId, gate);
  if (claim.outcome === 'wait') return claim;
  return { ...claim.records[0]!, ...(claim.trial ? { trial: true as const } : {}) };
}

/** How one attempt ended, in a settle of one. */
export async function settleKey(ledger: Ledger, input: SettleInput): Promise<SettleOutcome> {
  return (await ledger.settleMany([input]))[0]!;
}
