import { describe, expect, it } from 'vitest';
import { RequestSlots } from '../../src/worker/requestSlots.js';

/** Resolves after every promise callback queued so far has run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('RequestSlots', () => {
  it('a wave takes all its slots at once only while they are free and no wave leads or waits', async () => {
    const slots = new RequestSlots(10);
    expect(slots.tryAcquire(6)).toBe(true);
    expect(slots.tryAcquire(6)).toBe(false); // four free
    expect(slots.available).toBe(4);
    const handOn = await slots.lead();
    expect(slots.tryAcquire(4)).toBe(false); // free, but a wave leads
    handOn();
    expect(slots.tryAcquire(4)).toBe(true);
    const waiting = slots.acquire(1);
    slots.release(6);
    await waiting;
    expect(slots.available).toBe(5);
  });

  it('waves lead one at a time per 50 slots, first come first served; handing on twice hands on once', async () => {
    const slots = new RequestSlots(50);
    expect(slots.leaders).toBe(1);
    expect(new RequestSlots(200).leaders).toBe(4);
    const order: string[] = [];
    const first = await slots.lead();
    const second = slots.lead().then((handOn) => (order.push('second'), handOn));
    const third = slots.lead().then((handOn) => (order.push('third'), handOn));
    await settled();
    expect(order).toEqual([]);
    first();
    first();
    await settled();
    expect(order).toEqual(['second']);
    (await second)();
    (await third)();
    expect(order).toEqual(['second', 'third']);
    // Nobody leads now: a wave with free slots takes them at once again.
    expect(slots.tryAcquire(50)).toBe(true);
  });

  it('four waves lead at once at 200 slots; the fifth waits for one to hand on', async () => {
    const slots = new RequestSlots(200);
    const leading = await Promise.all([slots.lead(), slots.lead(), slots.lead(), slots.lead()]);
    let fifth = false;
    const waits = slots.lead().then((handOn) => ((fifth = true), handOn));
    await settled();
    expect(fifth).toBe(false);
    leading[2]?.();
    (await waits)();
    expect(fifth).toBe(true);
  });

  it('slots are given first come, first served: a wave waiting for one is not overtaken', async () => {
    const slots = new RequestSlots(2);
    await slots.acquire(2);
    const got: string[] = [];
    const a = slots.acquire(1).then(() => got.push('a'));
    const b = slots.acquire(2).then(() => got.push('b'));
    const c = slots.acquire(1).then(() => got.push('c'));
    slots.release(1);
    await a;
    slots.release(1);
    await settled();
    expect(got).toEqual(['a']); // b waits for two; c, behind it, waits too
    slots.release(1);
    await b;
    slots.release(2);
    await c;
    expect(got).toEqual(['a', 'b', 'c']);
  });
});
