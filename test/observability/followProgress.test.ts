import { describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import type { Batch, BatchStore } from '../../src/batches/batchStore.js';

/** A batch of 10 orders whose `delivered` grows by one on every read (no Redis). */
function growingBatch(): { store: BatchStore; reads: () => number } {
  let reads = 0;
  const store = {
    get: async (): Promise<Batch> => {
      const delivered = Math.min(reads++, 10);
      return {
        ...{ rows: 10, orders: 10, valid: 10, rejected: 0, skippedDelivered: 0, skippedHeld: 0, skippedQueued: 0 },
        ...{
          conflicts: 0,
          skippedRefused: 0,
          skippedIdentical: 0,
          skippedResults: 0,
          enqueued: 10,
          delivered,
          dead: 0,
          held: 0,
        },
        ...{
          possibleDuplicates: 0,
          resolved: 0,
          movedOn: 0,
          id: 'b-1',
          file: 'f.csv',
          sha256: '',
          env: 'acceptance',
          startedAt: 0,
        },
        columns: [],
        importState: 'imported',
      };
    },
  } as unknown as BatchStore;
  return { store, reads: () => reads };
}

function terminal(): { out: { isTTY: true; write: (text: string) => boolean }; writes: string[] } {
  const writes: string[] = [];
  return { out: { isTTY: true, write: (text) => writes.push(text) > 0 }, writes };
}

describe('followBatch', () => {
  it('reads the batch every pollMs but draws the progress bar at most every drawEveryMs, and once settled', async () => {
    const { store, reads } = growingBatch();
    const { out, writes } = terminal();
    const { batch, settled } = await followBatch(store, 'b-1', { pollMs: 1, drawEveryMs: 60_000, out });
    expect(settled).toBe(true);
    expect(batch.delivered).toBe(10);
    expect(reads()).toBe(11);
    // The first read and the settled one, not one per read.
    expect(writes).toHaveLength(2);
    expect(writes[0]).toContain('0/10 settled');
    expect(writes[1]).toContain('10/10 settled: 10 delivered');
    expect(writes[1]).toMatch(/\n$/);
  });

  it('draws on every read when drawEveryMs allows it', async () => {
    const { store } = growingBatch();
    const { out, writes } = terminal();
    await followBatch(store, 'b-1', { pollMs: 1, drawEveryMs: 0, out });
    expect(writes).toHaveLength(11);
  });
});
