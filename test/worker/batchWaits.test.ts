import { describe, expect, it } from 'vitest';
import { waitVerdict, type BatchView } from '../../src/batches/putBackChunks.js';
import { BatchWaits } from '../../src/worker/batchWaits.js';

/**
 * Chunks kept back by their batch wait in place (src/worker/batchWaits.ts): what each view of the
 * batch tells a waiter, and how one look per batch serves every waiter of the process. The look is
 * the test's own function (what Redis would answer), so each tick's view is known.
 */
describe('waiting in place for a batch', () => {
  it('a read waiter goes once the read ended; a canary waiter once the canary no longer judges; a held batch sends it to rest', () => {
    const view = (reading: boolean, state?: string): BatchView => ({ reading, state });
    expect(waitVerdict(view(true), 'read')).toBe('wait');
    expect(waitVerdict(view(false), 'read')).toBe('go');
    expect(waitVerdict(view(false, 'canary'), 'read')).toBe('go');
    expect(waitVerdict(view(true, 'flowing'), 'judged')).toBe('wait');
    expect(waitVerdict(view(false), 'judged')).toBe('wait');
    expect(waitVerdict(view(false, 'canary'), 'judged')).toBe('wait');
    expect(waitVerdict(view(false, 'held'), 'judged')).toBe('rest');
    for (const state of ['flowing', 'released', 'cancelled'])
      expect(waitVerdict(view(false, state), 'judged')).toBe('go');
  });

  it('one look per batch serves all its waiters; they go when the view frees them, a poke looks at once', async () => {
    const looks: string[] = [];
    let view: BatchView = { reading: false, state: 'canary' };
    const waits = new BatchWaits(async (batchId) => {
      looks.push(batchId);
      return view;
    }, 60_000);
    const waiting = Array.from({ length: 5 }, () => waits.until('b1', 'judged', { maxMs: 60_000 }));
    waits.poke('b1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(looks).toEqual(['b1']);
    view = { reading: false, state: 'flowing' };
    waits.poke('b1');
    expect(await Promise.all(waiting)).toEqual([true, true, true, true, true]);
    expect(looks).toEqual(['b1', 'b1']);
    // No waiter left: a poke looks at nothing.
    waits.poke('b1');
    expect(looks).toEqual(['b1', 'b1']);
  });

  it('a waiter ends false when its time is up, when its worker stops, or when the batch is held; others wait on', async () => {
    let stopping = false;
    let view: BatchView = { reading: false, state: 'canary' };
    const waits = new BatchWaits(async () => view, 60_000);
    const late = waits.until('b1', 'judged', { maxMs: 0 });
    const stopped = waits.until('b1', 'judged', { maxMs: 60_000, stopping: () => stopping });
    const patient = waits.until('b1', 'judged', { maxMs: 60_000 });
    waits.poke('b1');
    expect(await late).toBe(false);
    stopping = true;
    waits.poke('b1');
    expect(await stopped).toBe(false);
    view = { reading: false, state: 'held' };
    waits.poke('b1');
    expect(await patient).toBe(false);
  });

  it('a look that fails keeps its waiters waiting; the next look frees them', async () => {
    let fail = true;
    const waits = new BatchWaits(async () => {
      if (fail) throw new Error('Redis away');
      return { reading: false, state: undefined };
    }, 60_000);
    let ended: boolean | undefined;
    const waiting = waits.until('b1', 'read', { maxMs: 60_000 }).then((free) => (ended = free));
    waits.poke('b1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBeUndefined();
    fail = false;
    waits.poke('b1');
    await waiting;
    expect(ended).toBe(true);
  });
});
