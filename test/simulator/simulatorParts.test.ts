import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/simulator/canonicalJson.js';
import { CounterBoard } from '../../src/simulator/counterBoard.js';
import { FaultPlan } from '../../src/simulator/faultPlan.js';
import { createPrng } from '../../src/simulator/prng.js';
import { SlidingWindowLimiter } from '../../src/simulator/slidingWindowLimiter.js';
import { userAgentProblem } from '../../src/simulator/userAgent.js';

describe('SlidingWindowLimiter', () => {
  it('admits at most `limit` requests in any window and slides', () => {
    const limiter = new SlidingWindowLimiter(2, 1000);
    expect([limiter.tryAdmit(0), limiter.tryAdmit(500), limiter.tryAdmit(999)]).toEqual([true, true, false]);
    expect(limiter.tryAdmit(1000)).toBe(true); // the request at 0 has left the window
    expect(limiter.tryAdmit(1499)).toBe(false);
    expect(limiter.tryAdmit(1500)).toBe(true);
  });

  it('admits everything when the limit is 0', () => {
    const limiter = new SlidingWindowLimiter(0);
    expect(Array.from({ length: 100 }, () => limiter.tryAdmit(0)).every(Boolean)).toBe(true);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });
});

describe('createPrng', () => {
  it('is reproducible from its seed and uniform-ish in [0, 1)', () => {
    const a = createPrng(7);
    const b = createPrng(7);
    const draws = Array.from({ length: 10_000 }, () => a());
    expect(draws.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => b()));
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = draws.reduce((s, x) => s + x, 0) / draws.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.02);
  });
});

describe('FaultPlan', () => {
  it('adds jitter in [latency, latency + jitter) and varies it', () => {
    const plan = new FaultPlan({ latencyMs: 100, jitterMs: 50 }, 1, new CounterBoard(1));
    const delays = Array.from({ length: 100 }, () => plan.decideApi('orders', 0).delayMs);
    expect(delays.every((d) => d >= 100 && d < 150)).toBe(true);
    expect(new Set(delays).size).toBeGreaterThan(50);
  });

  it('keeps the three fates exclusive and their fractions exact in expectation', () => {
    const counters = new CounterBoard(1);
    const plan = new FaultPlan({ serverErrorRate: 0.2, storedThenErrorRate: 0.3, noAnswerRate: 0.5 }, 1, counters);
    const fates = Array.from({ length: 1000 }, () => plan.decideApi('orders', 0).fate);
    expect(fates).not.toContain('normal');
    const faults = counters.snapshot().faults;
    expect(faults.serverError + faults.storedThenError + faults.noAnswer).toBe(1000);
    expect(faults.noAnswer).toBeGreaterThan(400);
  });

  it('restarts its PRNG on reset', () => {
    const plan = new FaultPlan({ serverErrorRate: 0.5 }, 9, new CounterBoard(9));
    const first = Array.from({ length: 50 }, () => plan.decideApi('orders', 0).fate);
    plan.reset();
    expect(Array.from({ length: 50 }, () => plan.decideApi('orders', 0).fate)).toEqual(first);
  });
});

describe('userAgentProblem', () => {
  it.each(['Acme-AcmeGifts', 'bulkorder-Example.BV', 'a1-B'])('accepts %s', (value) => {
    expect(userAgentProblem(value)).toBeUndefined();
  });
  it.each([undefined, '', 'Acme', '-Acme', 'Acme-', 'Acme-.x', 'Acme Gifts-X', 'Undici-x', 'node-fetch', 'curl/8.0', 'Go-http-client', 'okhttp-4'])(
    'refuses %s',
    (value) => {
      expect(userAgentProblem(value)).toEqual(expect.any(String));
    },
  );
});
