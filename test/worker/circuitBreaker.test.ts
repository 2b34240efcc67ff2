import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { keyspace } from '../../src/keyspace.js';
import { createLogger } from '../../src/logger.js';
import type { Outcome } from '../../src/delivery/classifyOutcome.js';
import { CircuitBreaker, type BreakerEvent } from '../../src/worker/circuitBreaker.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { readBreakerView } from '../../src/worker/breakerView.js';
import type { BreakerSettings } from '../../src/deliverySettings.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import { reserveKeys } from '../helpers/ledgerReserve.js';

const redis = testRedis();
const SETTINGS: BreakerSettings = {
  windowMs: 60_000,
  minAttempts: 20,
  minOrders: 10,
  minCustomers: 3,
  minBatches: 1,
  refusalRatio: 0.9,
  serverFailingRatio: 0.5,
  unreachableRatio: 0.5,
  credentialsMinAttempts: 3,
  openMs: 30_000,
  maxOpenMs: 600_000,
  trialCalls: 3,
  alertAfterMs: 1_800_000,
};
const refusal = (code: string, status = 400): Outcome => ({
  kind: 'permanent',
  status,
  code,
  message: code,
  body: { code },
  bodyTruncated: false,
});
const delivered: Outcome = { kind: 'delivered', status: 201, body: {} };

let prefix = '';
let clock = 0;
let calls: string[] = [];
let events: BreakerEvent[] = [];
let requeued: string[] = [];

function breaker(): CircuitBreaker {
  return new CircuitBreaker(redis, keyspace(prefix), createLogger({ level: 'silent' }), {
    settings: SETTINGS,
    pauseQueue: async () => void calls.push('pause'),
    resumeQueue: async () => void calls.push('resume'),
    requeueBurst: async (keys) => {
      requeued.push(...keys);
      return keys.length;
    },
    onBreakerEvent: (event) => void events.push(event),
    now: () => clock,
  });
}

beforeEach(async () => {
  if (prefix !== '') await deletePrefix(redis, prefix);
  prefix = testPrefix('breaker');
  clock = 1_700_000_000_000;
  calls = [];
  events = [];
  requeued = [];
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('CircuitBreaker on a shared Redis window', () => {
  it('stays closed for refusals about a few orders, however often they repeat, and below the ratio', async () => {
    const b = breaker();
    for (let i = 0; i < 40; i++) await b.record(refusal('UNKNOWN_CUSTOMER', 403), `order-${i % 5}`);
    for (let i = 0; i < 200; i++) b.record(delivered, `good-${i}`).catch(() => undefined);
    await b.tick();
    for (let i = 0; i < 15; i++) await b.record(refusal('UNKNOWN_CUSTOMER', 403), `other-${i}`);
    expect((await b.status()).state).toBe('closed');
    expect(calls).toEqual([]);
  });

  it('weighs a burst of refusals against the successes this worker had before its next tick (10% refused, no tick in between)', async () => {
    const b = breaker();
    // A fast run: 400 attempts within one tick interval, one in ten refused 403; the successes are
    // not flushed by a tick, yet the refusals must be judged against them.
    for (let i = 0; i < 400; i++)
      await b.record(i % 10 === 0 ? refusal('UNKNOWN_CUSTOMER', 403) : delivered, `order-${i}`);
    expect((await b.status()).state).toBe('closed');
    expect(calls).toEqual([]);
  });

  it('opens on a code it never saw when nearly every order gets it; a manual pause is never resumed; a healthy trial closes it and requeues the burst', async () => {
    const a = breaker();
    const other = breaker(); // a second worker sharing the window
    for (let i = 0; i < 20; i++) await (i % 2 === 0 ? a : other).record(refusal('USER_AGENT_REQUIRED'), `order-${i}`);
    const opened = await a.status();
    expect(opened).toMatchObject({
      state: 'open',
      signature: 'HTTP 400 USER_AGENT_REQUIRED',
      code: 'USER_AGENT_REQUIRED',
      nextProbeAt: clock + 30_000,
    });
    expect(calls).toEqual(['pause']);
    expect(events.map((e) => e.type)).toEqual(['opened']);
    // The other worker opened it; this one learns at its next tick (once a second), then holds jobs back.
    await a.tick();
    expect(await a.admit()).toEqual({ go: false, waitMs: 30_000 });

    await redis.set(keyspace(prefix).pausedBy, JSON.stringify({ by: 'ops', at: clock }));
    clock += 31_000;
    await a.tick();
    expect((await a.status()).state).toBe('open');
    await redis.del(keyspace(prefix).pausedBy);
    await a.tick();
    expect((await a.status()).state).toBe('halfOpen');
    expect(calls).toEqual(['pause', 'resume']);

    const trials = [await a.admit(), await a.admit(), await a.admit(), await a.admit()];
    expect(trials.map((t) => (t.go ? (t.trial ? 'trial' : 'go') : 'wait'))).toEqual([
      'trial',
      'trial',
      'trial',
      'wait',
    ]);
    await a.record(delivered, 'trial-1');
    expect((await a.status()).state).toBe('closed');
    expect(requeued.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `order-${i}`).sort());
    expect(events.map((e) => e.type)).toEqual(['opened', 'halfOpen', 'closed']);
  });

  it('a failed trial reopens with a doubled wait; open past the alert limit it says so once', async () => {
    const b = breaker();
    for (let i = 0; i < 20; i++)
      await b.record({ kind: 'retry', code: 'CONNECT_REFUSED', message: 'refused' }, `order-${i}`);
    expect(await b.status()).toMatchObject({ state: 'open', signature: 'NO_CONNECTION' });
    clock += 30_000;
    await b.tick();
    await b.admit();
    await b.record({ kind: 'retry', code: 'CONNECT_REFUSED', message: 'refused' }, 'order-1');
    expect(await b.status()).toMatchObject({ state: 'open', openCount: 2, nextProbeAt: clock + 60_000 });
    expect(requeued).toEqual([]);
    clock += SETTINGS.alertAfterMs;
    await b.tick();
    await b.tick();
    expect(events.filter((e) => e.type === 'stuck')).toHaveLength(1);
    expect((await b.status()).overdue).toBe(true);
  });

  it('the claim asks an open breaker in its own script: it refuses and claims nothing; half-open it grants the trials; closed it is not asked', async () => {
    const b = breaker();
    const ledger = new Ledger(redis, keyspace(prefix), { queueName: 'orders' });
    await reserveKeys(ledger, ['k1', 'k2', 'k3', 'k4', 'k5'], 'b1', false);
    expect(b.gate()).toBeUndefined(); // closed: a claim costs the breaker nothing
    for (let i = 0; i < 20; i++) await b.record(refusal('USER_AGENT_REQUIRED'), `order-${i}`);
    const gate = b.gate();
    expect(gate?.key).toBe(keyspace(prefix).breaker);

    // Each key a chunk of one, claimed by the chunk its entry names.
    const claim = async (key: string, token: string, asked: ReturnType<typeof b.gate>) =>
      ledger.claimMany([key], token, (await ledger.get(key))!.chunkId!, asked);
    const refused = await claim('k1', 't1', gate);
    expect(refused).toEqual({ outcome: 'wait', retryAt: clock + 30_000 });
    expect(b.admission(refused)).toEqual({ go: false, waitMs: 30_000 });
    expect((await ledger.get('k1'))?.state).toBe('queued'); // nothing claimed

    clock += 31_000;
    await b.tick();
    const claims = [];
    for (const key of ['k1', 'k2', 'k3', 'k4']) claims.push(await claim(key, `t-${key}`, b.gate()));
    expect(claims.map((c) => (c.outcome === 'wait' ? 'wait' : c.records[0]!.outcome))).toEqual([
      'claimed',
      'claimed',
      'claimed',
      'wait',
    ]);
    expect(claims.map((c) => b.admission(c))).toEqual([
      { go: true, trial: true },
      { go: true, trial: true },
      { go: true, trial: true },
      { go: false, waitMs: 1000 },
    ]);
    expect((await ledger.get('k4'))?.state).toBe('queued');

    // Another worker closed it: the next claim that asks says go, and this worker stops asking.
    await redis.hset(keyspace(prefix).breaker, 'state', 'closed');
    const go = await claim('k5', 't-k5', b.gate());
    expect(go).toEqual({ outcome: 'claims', trial: false, records: [{ outcome: 'claimed', attempt: 1 }] });
    expect(b.admission(go)).toEqual({ go: true, trial: false });
    expect(b.gate()).toBeUndefined();
  });

  it('judges refusals by customers: one customer refused 40 times never opens it; the same refusal for 3 customers does, naming them', async () => {
    const b = breaker();
    for (let i = 0; i < 40; i++) await b.record(refusal('UNKNOWN_CUSTOMER', 403), `c1-order-${i}`, '9001');
    expect((await b.status()).state).toBe('closed');
    for (let i = 0; i < 4; i++) await b.record(refusal('UNKNOWN_CUSTOMER', 403), `c2-order-${i}`, '9002');
    expect((await b.status()).state).toBe('closed');
    await b.record(refusal('UNKNOWN_CUSTOMER', 403), 'c3-order-0', '9003');
    const opened = await b.status();
    expect(opened).toMatchObject({ state: 'open', class: 'refusal', counts: { '403': 45 } });
    expect(opened.customers?.sort()).toEqual(['9001', '9002', '9003']);
    expect(opened.reason).toBe(
      'refused with HTTP 403 UNKNOWN_CUSTOMER: 45 of 45 attempts in 60 s (45 orders, 3 customers)',
    );
  });

  it('a healthy trial of a customer the refusals never named closes it, leaves their dead letters and counts their refusals no more', async () => {
    const b = breaker();
    for (let i = 0; i < 21; i++) await b.record(refusal('UNKNOWN_CUSTOMER', 403), `order-${i}`, String(9001 + (i % 3)));
    expect((await b.status()).state).toBe('open');
    clock += 31_000;
    await b.tick();
    await b.admit();
    const probe = requeued.length; // half-open sends one order of the burst as a trial when nothing else waits
    await b.record(delivered, 'good-1', '1001');
    expect((await b.status()).state).toBe('closed');
    expect(requeued).toHaveLength(probe);
    expect(events.map((e) => e.type)).toEqual(['opened', 'halfOpen', 'closed']);
    // Their remaining orders are refused as before: dead-lettered one by one, the breaker stays closed.
    for (let i = 0; i < 60; i++) await b.record(refusal('UNKNOWN_CUSTOMER', 403), `later-${i}`, String(9001 + (i % 3)));
    expect((await b.status()).state).toBe('closed');
  });

  it("a healthy trial of a refused customer closes it and requeues the burst (the refusal was the API's)", async () => {
    const b = breaker();
    for (let i = 0; i < 21; i++) await b.record(refusal('USER_AGENT_REQUIRED'), `order-${i}`, String(1001 + (i % 3)));
    clock += 31_000;
    await b.tick();
    await b.admit();
    await b.record(delivered, 'order-0', '1001');
    expect((await b.status()).state).toBe('closed');
    expect(new Set(requeued).size).toBe(21);
  });

  it('500, 502, 503, 504 and no answer in a mix are one class: it opens at half the window, naming each status', async () => {
    const b = breaker();
    const statuses = [500, 502, 503, 504];
    for (let i = 0; i < 20; i++) b.record(delivered, `good-${i}`).catch(() => undefined);
    await b.tick();
    for (let i = 0; i < 19; i++) {
      const status = statuses[i % 4]!;
      await b.record({ kind: 'retry', status, code: `HTTP_${status}`, message: 'bad gateway' }, `order-${i}`, '1001');
    }
    const view = await readBreakerView(redis, keyspace(prefix), SETTINGS, { now: clock });
    expect(view).toMatchObject({
      state: 'closed',
      degraded: { share: 19 / 39, text: 'API failing: 49% 5xx or no answer in the last 60 s' },
    });
    expect(view.counts).toEqual({ '500': 5, '502': 5, '503': 5, '504': 4 });
    await b.record({ kind: 'ambiguous', code: 'HEADERS_TIMEOUT', message: 'no answer' }, 'order-19', '1001');
    const opened = await readBreakerView(redis, keyspace(prefix), SETTINGS, { now: clock });
    expect(opened).toMatchObject({
      state: 'open',
      nextTrialAt: clock + 30_000,
      counts: { '500': 5, '502': 5, '503': 5, '504': 4, 'no answer': 1 },
    });
    expect(opened.reason).toBe(
      'server failing: 500 x5, 502 x5, 503 x5, 504 x4, no answer x1 of 40 attempts in 60 s (20 orders)',
    );
    expect(opened.status).toMatchObject({ class: 'serverFailing', signature: 'SERVER_FAILING' });
    expect(calls).toEqual(['pause']);
  });
});
