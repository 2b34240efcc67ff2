import { describe, expect, it } from 'vitest';
import { canonicalOrder } from '../../src/simulator/canonicalOrder.js';
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

describe('canonicalOrder', () => {
  const order = () => ({
    businessCustomerId: 1001,
    recipient: {
      address: {
        firstName: 'A',
        lastName: 'B',
        street: 'S',
        streetNumber: 1,
        postalCode: 'P',
        city: 'C',
        countryCode: 'NL',
      },
      languageCode: 'nl',
      email: 'a@example.nl',
      telephoneNumber: '+31612345678',
    },
    products: [
      { productId: 5001, quantity: 1 },
      { productId: 5002, quantity: 2 },
    ],
  });

  it('ignores key order', () => {
    const o = order();
    const reordered = {
      products: o.products.map((l) => ({ quantity: l.quantity, productId: l.productId })),
      recipient: o.recipient,
      businessCustomerId: 1001,
    };
    expect(canonicalOrder(reordered)).toBe(canonicalOrder(order()));
  });

  it('tells apart orders that differ in any field or in line order', () => {
    const texts = new Set([canonicalOrder(order())]);
    const changes: ((o: ReturnType<typeof order>) => void)[] = [
      (o) => (o.businessCustomerId = 1002),
      (o) => (o.recipient.address.firstName = 'Z'),
      (o) => (o.recipient.address.lastName = 'Z'),
      (o) => (o.recipient.address.street = 'Z'),
      (o) => (o.recipient.address.streetNumber = 2),
      (o) => (o.recipient.address.postalCode = 'Z'),
      (o) => (o.recipient.address.city = 'Z'),
      (o) => (o.recipient.address.countryCode = 'BE'),
      (o) => (o.recipient.languageCode = 'fr'),
      (o) => (o.recipient.email = 'z@example.nl'),
      (o) => (o.recipient.telephoneNumber = '+31612345679'),
      (o) => o.products.reverse(),
      (o) => (o.products[0]!.quantity = 3),
    ];
    for (const change of changes) {
      const o = order();
      change(o);
      texts.add(canonicalOrder(o));
    }
    expect(texts.size).toBe(changes.length + 1);
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
  it.each([
    undefined,
    '',
    'Acme',
    '-Acme',
    'Acme-',
    'Acme-.x',
    'Acme Gifts-X',
    'Undici-x',
    'node-fetch',
    'curl/8.0',
    'Go-http-client',
    'okhttp-4',
  ])('refuses %s', (value) => {
    expect(userAgentProblem(value)).toEqual(expect.any(String));
  });
});
