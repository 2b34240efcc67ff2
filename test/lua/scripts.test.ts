import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { defineScripts } from '../../src/lua/defineScripts.js';
import { argv } from '../../src/lua/scriptArgv.js';
import { SCRIPT_COMMANDS } from '../../src/lua/scriptCommands.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import { readState, seedState, type RedisState } from '../helpers/redisState.js';

/**
 * One table for every Lua script (src/lua/scripts/): given keys on a fresh prefix of the real
 * Redis, the command's result and every key under the prefix afterwards.
 */
interface Row {
  name: string;
  command: (typeof SCRIPT_COMMANDS)[number];
  given?: RedisState;
  run: (redis: Redis, k: (name: string) => string) => Promise<unknown>;
  returns: unknown;
  /** Every key under the prefix afterwards (`given` when omitted: nothing changed). */
  then?: RedisState;
  /** Keys that must expire (true) or persist (false) afterwards. */
  expires?: Record<string, boolean>;
}

const NOW = 1_000_000;
const RET = 60_000;
const T = String(NOW);

const claimArgv = (askGate: '0' | '1', jobId = '', customer = '') =>
  argv('claim', { token: 't1', now: NOW, retentionMs: RET, ambiguousPolicy: 'hold', askGate, jobId, customer });
const reserveArgv = (k: (name: string) => string, fingerprint: string) =>
  argv('reserve', {
    batchId: 'B1',
    now: NOW,
    retentionMs: RET,
    force: '0',
    staleMs: 60_000,
    fingerprint,
    fingerprintParts: 'a=1',
    jobJson: '{"name":"order"}',
    orderKey: 'o1',
    alreadyCounted: '0',
    jobPrefix: k('q:'),
  });
const settleArgv = (values: Partial<Parameters<typeof argv<'settle'>>[1]>) =>
  argv('settle', {
    token: 't1',
    newState: 'delivered',
    now: NOW,
    retentionMs: RET,
    orderKey: 'o1',
    remoteId: '',
    httpStatus: '',
    code: '',
    message: '',
    parkedRecord: '',
    parkedRetentionMs: RET,
    answered5xx: '0',
    ...values,
  });
const settleKeys = (k: (name: string) => string) =>
  [k('ledger:o1'), k('batch:B1'), k('dead:o1'), k('dead-index'), k('held:o1'), k('held-index')] as const;
const unreleaseKeys = (k: (name: string) => string) =>
  [k('ledger:o1'), k('held:o1'), k('held-index'), k('unqueued'), k('unqueued-jobs')] as const;
const failureArgv = (k: (name: string) => string, minAttempts: number) =>
  argv('recordFailure', {
    now: NOW,
    windowMs: 10_000,
    bucketPrefix: k('buckets:'),
    attemptId: 'HTTP 400|a1',
    orderKey: 'o1',
    signature: 'S',
    minAttempts,
    minOrders: 1,
    ratio: 0.5,
    openMs: 1000,
    maxOpenMs: 8000,
    class: 'refusal',
    status: 400,
    code: 'E',
    message: 'bad',
    healthy: 0,
    customer: 'c1',
    minCustomers: 1,
  });
const failureKeys = (k: (name: string) => string) =>
  [k('breaker'), k('failures:S'), k('orders:S'), k('burst'), k('customers:S'), k('exempt')] as const;
const closeArgv = (k: (name: string) => string, trialCustomer: string) =>
  argv('closeBreaker', {
    now: NOW,
    onlyHalfOpen: '1',
    failuresPrefix: k('failures:'),
    ordersPrefix: k('orders:'),
    customersPrefix: k('customers:'),
    trialCustomer,
    exemptMs: 60_000,
  });
const tickArgv = argv('tickBreaker', {
  now: NOW,
  trialCalls: 2,
  trialTimeoutMs: 120_000,
  alertAfterMs: 600_000,
  trialFallbackMs: 5000,
});
/** Half-open after a refusal's trip of customers c1 and c2; trials go to others until anyTrialAt. */
const refusedHalfOpen = (anyTrialAt: number) => ({
  state: 'halfOpen',
  trialsLeft: '1',
  class: 'refusal',
  customers: 'c1\nc2',
  anyTrialAt: String(anyTrialAt),
});
const closeKeys = (k: (name: string) => string) =>
  [k('breaker'), k('burst'), k('exempt'), k('answers'), k('refused')] as const;

const rows: Row[] = [
  {
    name: 'reserve: a new key is queued in the batch, its job kept',
    command: 'bulkorderReserve',
    run: (r, k) =>
      r.bulkorderReserve(
        k('ledger:o1'),
        k('q:o1'),
        k('unqueued'),
        k('unqueued-jobs'),
        k('batch:B1'),
        ...reserveArgv(k, 'f1'),
      ),
    returns: ['reserved', '', '', ''],
    then: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T, f: 'f1', fp: 'a=1' } },
      'unqueued-jobs': { hash: { o1: '{"name":"order"}' } },
      unqueued: { zset: { o1: NOW } },
    },
    expires: { 'ledger:o1': true },
  },
  {
    name: 'reserve: a key delivered with other content is a conflict, nothing written',
    command: 'bulkorderReserve',
    given: { 'ledger:o1': { hash: { s: 'delivered', b: 'B0', f: 'f0', fp: 'a=0', d: '500', u: '600' } } },
    run: (r, k) =>
      r.bulkorderReserve(
        k('ledger:o1'),
        k('q:o1'),
        k('unqueued'),
        k('unqueued-jobs'),
        k('batch:B1'),
        ...reserveArgv(k, 'f1'),
      ),
    returns: ['conflict', 'B0', 'a=0', '500', 'delivered'],
  },
  {
    name: 'reserveChunk: the new record joins the chunk job, the delivered one stays out',
    command: 'bulkorderReserveChunk',
    given: { 'ledger:o2': { hash: { s: 'delivered', b: 'B0', f: 'f2', u: '1' } } },
    run: (r, k) =>
      r.bulkorderReserveChunk(
        5,
        k('unqueued'),
        k('unqueued-jobs'),
        k('batch:B1'),
        k('ledger:o1'),
        k('ledger:o2'),
        'B1',
        NOW,
        RET,
        '0',
        60_000,
        k('q:'),
        'B1.1',
        '{"records":[',
        ']}',
        '1',
        'o1',
        'f1',
        'a=1',
        '{"key":"o1"}',
        'o2',
        'f2',
        'a=2',
        '{"key":"o2"}',
      ),
    returns: ['reserved', '', '', '', '', 'delivered', 'B0', '', '', ''],
    then: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T, q: '1', f: 'f1', fp: 'a=1' } },
      'ledger:o2': { hash: { s: 'delivered', b: 'B0', f: 'f2', u: '1' } },
      'unqueued-jobs': { hash: { 'B1.1': '{"records":[{"key":"o1"}]}' } },
      unqueued: { zset: { 'B1.1': NOW } },
    },
  },
  {
    name: 'confirm: the kept job goes and the batch counts the order once',
    command: 'bulkorderConfirm',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1' } },
      unqueued: { zset: { o1: 1 } },
      'unqueued-jobs': { hash: { o1: '{}' } },
      'batch:B1': { hash: { id: 'B1', enqueued: '0' } },
    },
    run: (r, k) => r.bulkorderConfirm(k('ledger:o1'), k('batch:B1'), k('unqueued'), k('unqueued-jobs'), 'B1', 'o1'),
    returns: 1,
    then: { 'ledger:o1': { hash: { s: 'queued', b: 'B1' } }, 'batch:B1': { hash: { id: 'B1', enqueued: '1' } } },
  },
  {
    name: "confirmChunk: counts only the records still this batch's in this chunk",
    command: 'bulkorderConfirmChunk',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1' } },
      'ledger:o2': { hash: { s: 'queued', b: 'B2', q: '1' } },
      unqueued: { zset: { 'B1.1': 1 } },
      'unqueued-jobs': { hash: { 'B1.1': '{}' } },
      'batch:B1': { hash: { id: 'B1', enqueued: '0' } },
    },
    run: (r, k) =>
      r.bulkorderConfirmChunk(
        5,
        k('batch:B1'),
        k('unqueued'),
        k('unqueued-jobs'),
        k('ledger:o1'),
        k('ledger:o2'),
        'B1',
        'B1.1',
        '1',
      ),
    returns: 1,
    then: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1' } },
      'ledger:o2': { hash: { s: 'queued', b: 'B2', q: '1' } },
      'batch:B1': { hash: { id: 'B1', enqueued: '1' } },
    },
  },
  {
    name: 'dropStranded: index members go; the kept job only of an entry that expired',
    command: 'bulkorderDropStranded',
    given: {
      unqueued: { zset: { o1: 1, o2: 2 } },
      'unqueued-jobs': { hash: { o1: 'j1', o2: 'j2' } },
      'ledger:o2': { hash: { s: 'queued', b: 'B1' } },
    },
    run: (r, k) =>
      r.bulkorderDropStranded(4, k('unqueued'), k('unqueued-jobs'), k('ledger:o1'), k('ledger:o2'), 'o1', 'o2'),
    returns: 1,
    then: { 'unqueued-jobs': { hash: { o2: 'j2' } }, 'ledger:o2': { hash: { s: 'queued', b: 'B1' } } },
  },
  {
    name: 'claim: a queued order is sending under the token, attempt 1',
    command: 'bulkorderClaim',
    given: { 'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T } } },
    run: (r, k) => r.bulkorderClaim(k('ledger:o1'), k('ledger:o1'), ...claimArgv('0')),
    returns: ['claimed', '1', 'go'],
    then: { 'ledger:o1': { hash: { s: 'sending', b: 'B1', u: T, t: 't1', a: '1' } } },
  },
  {
    name: 'claim: the gate asked while the breaker is open says wait, nothing claimed',
    command: 'bulkorderClaim',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1' } },
      breaker: { hash: { state: 'open', nextProbeAt: '2000000' } },
    },
    run: (r, k) => r.bulkorderClaim(k('ledger:o1'), k('breaker'), ...claimArgv('1')),
    returns: ['wait', '2000000', 'wait'],
  },
  {
    name: 'claim: half-open after refusals of c1 and c2, an order of c1 waits a second, its trial kept for another',
    command: 'bulkorderClaim',
    given: { 'ledger:o1': { hash: { s: 'queued', b: 'B1' } }, breaker: { hash: refusedHalfOpen(NOW + 5000) } },
    run: (r, k) => r.bulkorderClaim(k('ledger:o1'), k('breaker'), ...claimArgv('1', '', 'c1')),
    returns: ['wait', String(NOW + 1000), 'wait'],
  },
  {
    name: 'claim: half-open after refusals of c1 and c2, an order of c3 is the trial',
    command: 'bulkorderClaim',
    given: { 'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T } }, breaker: { hash: refusedHalfOpen(NOW + 5000) } },
    run: (r, k) => r.bulkorderClaim(k('ledger:o1'), k('breaker'), ...claimArgv('1', '', 'c3')),
    returns: ['claimed', '1', 'trial'],
    then: {
      'ledger:o1': { hash: { s: 'sending', b: 'B1', u: T, t: 't1', a: '1' } },
      breaker: { hash: { ...refusedHalfOpen(NOW + 5000), trialsLeft: '0' } },
    },
  },
  {
    name: 'claim: half-open past anyTrialAt, an order of a refused customer is the trial (the queue holds no other)',
    command: 'bulkorderClaim',
    given: { 'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T } }, breaker: { hash: refusedHalfOpen(NOW) } },
    run: (r, k) => r.bulkorderClaim(k('ledger:o1'), k('breaker'), ...claimArgv('1', '', 'c1')),
    returns: ['claimed', '1', 'trial'],
    then: {
      'ledger:o1': { hash: { s: 'sending', b: 'B1', u: T, t: 't1', a: '1' } },
      breaker: { hash: { ...refusedHalfOpen(NOW), trialsLeft: '0' } },
    },
  },
  {
    name: 'claim: a trial whose order was delivered meanwhile gives the trial back',
    command: 'bulkorderClaim',
    given: {
      'ledger:o1': { hash: { s: 'delivered', b: 'B1', r: '"r1"' } },
      breaker: { hash: { state: 'halfOpen', trialsLeft: '1' } },
    },
    run: (r, k) => r.bulkorderClaim(k('ledger:o1'), k('breaker'), ...claimArgv('1')),
    returns: ['delivered', '"r1"', 'trial'],
  },
  {
    name: 'claimMany: half-open, one record of the chunk is the trial, the other later',
    command: 'bulkorderClaimMany',
    given: {
      breaker: { hash: { state: 'halfOpen', trialsLeft: '1' } },
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
      'ledger:o2': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
    },
    run: (r, k) =>
      r.bulkorderClaimMany(3, k('breaker'), k('ledger:o1'), k('ledger:o2'), 't1', NOW, RET, 'hold', '1', 'B1.1'),
    returns: ['trial', '0', 'claimed', '1', 'later', ''],
    then: {
      breaker: { hash: { state: 'halfOpen', trialsLeft: '0' } },
      'ledger:o1': { hash: { s: 'sending', b: 'B1', q: '1', u: T, t: 't1', a: '1' } },
      'ledger:o2': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
    },
  },
  {
    name: 'claimMany: half-open after refusals of c1 and c2, the record of c3 is the trial, c1 later',
    command: 'bulkorderClaimMany',
    given: {
      breaker: { hash: refusedHalfOpen(NOW + 5000) },
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
      'ledger:o2': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
    },
    run: (r, k) =>
      r.bulkorderClaimMany(
        3,
        k('breaker'),
        k('ledger:o1'),
        k('ledger:o2'),
        't1',
        NOW,
        RET,
        'hold',
        '1',
        'B1.1',
        'c1',
        'c3',
      ),
    returns: ['trial', '0', 'later', '', 'claimed', '1'],
    then: {
      breaker: { hash: { ...refusedHalfOpen(NOW + 5000), trialsLeft: '0' } },
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
      'ledger:o2': { hash: { s: 'sending', b: 'B1', q: '1', u: T, t: 't1', a: '1' } },
    },
  },
  {
    name: 'claimMany: half-open after refusals of c1 and c2, a chunk of only c1 and c2 waits, nothing claimed',
    command: 'bulkorderClaimMany',
    given: {
      breaker: { hash: refusedHalfOpen(NOW + 5000) },
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
      'ledger:o2': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
    },
    run: (r, k) =>
      r.bulkorderClaimMany(
        3,
        k('breaker'),
        k('ledger:o1'),
        k('ledger:o2'),
        't1',
        NOW,
        RET,
        'hold',
        '1',
        'B1.1',
        'c1',
        'c2',
      ),
    returns: ['wait', String(NOW + 1000)],
  },
  {
    name: 'claimMany: a trial that claims nothing (the other customer delivered) gives the trial back',
    command: 'bulkorderClaimMany',
    given: {
      breaker: { hash: refusedHalfOpen(NOW + 5000) },
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
      'ledger:o2': { hash: { s: 'delivered', b: 'B1', q: '1', u: T, r: '"r1"' } },
    },
    run: (r, k) =>
      r.bulkorderClaimMany(
        3,
        k('breaker'),
        k('ledger:o1'),
        k('ledger:o2'),
        't1',
        NOW,
        RET,
        'hold',
        '1',
        'B1.1',
        'c1',
        'c3',
      ),
    returns: ['trial', '0', 'later', '', 'delivered', '"r1"'],
  },
  {
    name: 'settle delivered: the dead letter goes, the batch counts it delivered and a possible duplicate',
    command: 'bulkorderSettle',
    given: {
      'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1', a: '1', x: '1' } },
      'batch:B1': { hash: { id: 'B1', delivered: '0' } },
      'dead-index': { zset: { o1: 5 } },
      'dead:o1': 'rec',
    },
    run: (r, k) => r.bulkorderSettle(...settleKeys(k), ...settleArgv({ remoteId: '"r1"', httpStatus: '201' })),
    returns: 'ok',
    then: {
      'ledger:o1': { hash: { s: 'delivered', t: '', b: 'B1', a: '1', x: '1', u: T, d: T, r: '"r1"', h: '201' } },
      'batch:B1': { hash: { id: 'B1', delivered: '1', possibleDuplicates: '1' } },
    },
    expires: { 'ledger:o1': true },
  },
  {
    name: 'settleOverMemory (allow-oom) delivered: writes what settle writes',
    command: 'bulkorderSettleOverMemory',
    given: {
      'ledger:o1': { hash: { s: 'held', t: '', b: 'B1', a: '1' } },
      'batch:B1': { hash: { id: 'B1', held: '1' } },
      'held-index': { zset: { o1: 5 } },
      'held:o1': 'rec',
    },
    run: (r, k) =>
      r.bulkorderSettleOverMemory(...settleKeys(k), ...settleArgv({ remoteId: '"r1"', httpStatus: '201' })),
    returns: 'ok',
    then: {
      'ledger:o1': { hash: { s: 'delivered', t: '', b: 'B1', a: '1', u: T, d: T, r: '"r1"', h: '201' } },
      'batch:B1': { hash: { id: 'B1', held: '0', delivered: '1' } },
    },
    expires: { 'ledger:o1': true },
  },
  {
    name: 'settle: another token owns the order: lost, nothing written',
    command: 'bulkorderSettle',
    given: { 'ledger:o1': { hash: { s: 'sending', t: 't2', b: 'B1' } }, 'batch:B1': { hash: { id: 'B1' } } },
    run: (r, k) => r.bulkorderSettle(...settleKeys(k), ...settleArgv({ newState: 'dead' })),
    returns: 'lost',
  },
  {
    name: 'settle held: the entry persists, the held record expires, the batch counts it held',
    command: 'bulkorderSettle',
    given: { 'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1' } }, 'batch:B1': { hash: { id: 'B1' } } },
    run: (r, k) =>
      r.bulkorderSettle(
        ...settleKeys(k),
        ...settleArgv({ newState: 'held', code: 'NO_ANSWER', message: 'no answer', parkedRecord: '{"p":1}' }),
      ),
    returns: 'ok',
    then: {
      'ledger:o1': { hash: { s: 'held', b: 'B1', u: T, c: 'NO_ANSWER', m: 'no answer' } },
      'held:o1': '{"p":1}',
      'held-index': { zset: { o1: NOW } },
      'batch:B1': { hash: { id: 'B1', held: '1' } },
    },
    expires: { 'ledger:o1': false, 'held:o1': true },
  },
  {
    name: 'settleMany: one delivered, one dead, each batch counter added once',
    command: 'bulkorderSettleMany',
    given: {
      'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1' } },
      'ledger:o2': { hash: { s: 'sending', t: 't1', b: 'B1' } },
      'batch:B1': { hash: { id: 'B1' } },
    },
    run: (r, k) =>
      r.bulkorderSettleMany(
        10,
        k('dead-index'),
        k('held-index'),
        k('ledger:o1'),
        k('batch:B1'),
        k('dead:o1'),
        k('held:o1'),
        k('ledger:o2'),
        k('batch:B1'),
        k('dead:o2'),
        k('held:o2'),
        NOW,
        RET,
        RET,
        't1',
        'delivered',
        'o1',
        '7',
        '201',
        '',
        '',
        '',
        '0',
        't1',
        'dead',
        'o2',
        '',
        '422',
        'E',
        'bad',
        '{"p":2}',
        '0',
      ),
    returns: ['ok', 'ok'],
    then: {
      'ledger:o1': { hash: { s: 'delivered', t: '', b: 'B1', u: T, d: T, r: '7', h: '201' } },
      'ledger:o2': { hash: { s: 'dead', b: 'B1', u: T, h: '422', c: 'E', m: 'bad' } },
      'dead:o2': '{"p":2}',
      'dead-index': { zset: { o2: NOW } },
      'batch:B1': { hash: { id: 'B1', delivered: '1', dead: '1' } },
    },
  },
  {
    name: 'release: held -> queued in the new batch, marked, its job kept, the held record gone',
    command: 'bulkorderRelease',
    given: {
      'ledger:o1': { hash: { s: 'held', b: 'B0', t: 't1', q: '3' } },
      'held:o1': 'rec',
      'held-index': { zset: { o1: 5 } },
    },
    run: (r, k) =>
      r.bulkorderRelease(
        ...unreleaseKeys(k),
        ...argv('release', {
          newBatch: 'B1',
          now: NOW,
          retentionMs: RET,
          orderKey: 'o1',
          who: 'ann',
          note: 'checked',
          jobJson: '{"j":1}',
        }),
      ),
    returns: ['released', 'B0', 'rec'],
    then: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T, rv: 'released', rw: 'ann', rt: T, rn: 'checked' } },
      'unqueued-jobs': { hash: { o1: '{"j":1}' } },
      unqueued: { zset: { o1: NOW } },
    },
  },
  {
    name: 'unrelease: back on hold in its batch, the held record and its index member back',
    command: 'bulkorderUnrelease',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', u: '1', rv: 'released', rw: 'ann', rt: '1', rn: 'checked' } },
      unqueued: { zset: { o1: 1 } },
      'unqueued-jobs': { hash: { o1: 'j' } },
    },
    run: (r, k) =>
      r.bulkorderUnrelease(
        ...unreleaseKeys(k),
        ...argv('unrelease', {
          releasedBatch: 'B1',
          previousBatch: 'B0',
          now: NOW,
          retentionMs: RET,
          orderKey: 'o1',
          recordJson: 'rec',
          score: 5,
          recordTtlMs: 60_000,
        }),
      ),
    returns: 1,
    then: { 'ledger:o1': { hash: { s: 'held', b: 'B0', u: T } }, 'held:o1': 'rec', 'held-index': { zset: { o1: 5 } } },
    expires: { 'held:o1': true },
  },
  {
    name: 'resolve: held -> delivered by a person, the batch counts it delivered',
    command: 'bulkorderResolve',
    given: {
      'ledger:o1': { hash: { s: 'held', b: 'B0', t: '', rn: 'old' } },
      'batch:B0': { hash: { id: 'B0', held: '1', delivered: '0' } },
      'held:o1': 'rec',
      'held-index': { zset: { o1: 5 } },
    },
    run: (r, k) =>
      r.bulkorderResolve(
        k('ledger:o1'),
        k('batch:B0'),
        k('held:o1'),
        k('held-index'),
        ...argv('resolve', {
          expectedBatch: 'B0',
          now: NOW,
          retentionMs: RET,
          orderKey: 'o1',
          remoteId: '"r9"',
          who: 'ann',
          note: '',
        }),
      ),
    returns: 'resolved',
    then: {
      'ledger:o1': { hash: { s: 'delivered', b: 'B0', u: T, d: T, rv: 'resolved', rw: 'ann', rt: T, r: '"r9"' } },
      'batch:B0': { hash: { id: 'B0', held: '0', delivered: '1' } },
    },
  },
  {
    name: 'resolve: the entry changed batch since it was read: moved, nothing written',
    command: 'bulkorderResolve',
    given: { 'ledger:o1': { hash: { s: 'held', b: 'B2' } }, 'held:o1': 'rec' },
    run: (r, k) =>
      r.bulkorderResolve(
        k('ledger:o1'),
        k('batch:B0'),
        k('held:o1'),
        k('held-index'),
        ...argv('resolve', {
          expectedBatch: 'B0',
          now: NOW,
          retentionMs: RET,
          orderKey: 'o1',
          remoteId: '',
          who: 'ann',
          note: '',
        }),
      ),
    returns: 'moved',
  },
  {
    name: "recordHealthy: successes join the current second's bucket",
    command: 'bulkorderRecordHealthy',
    given: { 'buckets:1000': '2' },
    run: (r, k) => r.bulkorderRecordHealthy(k('breaker'), k('buckets:'), NOW, 10_000, 5),
    returns: 1,
    then: { 'buckets:1000': '7' },
    expires: { 'buckets:1000': true },
  },
  {
    name: 'recordFailure: enough evidence opens the breaker and the burst holds the orders',
    command: 'bulkorderRecordFailure',
    run: (r, k) => r.bulkorderRecordFailure(...failureKeys(k), ...failureArgv(k, 1)),
    returns: ['opened', 'open', 1, 1, 1, 1, '{"HTTP 400":1}'],
    then: {
      'buckets:1000': '1',
      'failures:S': { zset: { 'HTTP 400|a1': NOW } },
      'orders:S': { zset: { o1: NOW } },
      'customers:S': { zset: { c1: NOW } },
      burst: { set: ['o1'] },
      breaker: {
        hash: {
          state: 'open',
          signature: 'S',
          class: 'refusal',
          customers: 'c1',
          status: '400',
          code: 'E',
          message: 'bad',
          since: T,
          openedAt: T,
          nextProbeAt: String(NOW + 1000),
          openCount: '1',
          trialsLeft: '0',
          alerted: '0',
        },
      },
    },
  },
  {
    name: 'recordFailure: below minAttempts the window grows and the breaker stays closed',
    command: 'bulkorderRecordFailure',
    run: (r, k) => r.bulkorderRecordFailure(...failureKeys(k), ...failureArgv(k, 2)),
    returns: ['none', 'closed'],
    then: {
      'buckets:1000': '1',
      'failures:S': { zset: { 'HTTP 400|a1': NOW } },
      'orders:S': { zset: { o1: NOW } },
      'customers:S': { zset: { c1: NOW } },
    },
  },
  {
    name: 'recordFailure: a refusal a healthy trial proved to be about its customer is no evidence',
    command: 'bulkorderRecordFailure',
    given: { exempt: { set: ['S|c1'] } },
    run: (r, k) => r.bulkorderRecordFailure(...failureKeys(k), ...failureArgv(k, 1)),
    returns: ['none', 'closed'],
    then: { 'buckets:1000': '1', exempt: { set: ['S|c1'] } },
  },
  {
    name: 'recordFailure: a failed trial reopens with twice the wait',
    command: 'bulkorderRecordFailure',
    given: { breaker: { hash: { state: 'halfOpen', signature: 'S', openCount: '1' } } },
    run: (r, k) => r.bulkorderRecordFailure(...failureKeys(k), ...failureArgv(k, 1)),
    returns: ['reopened', 'open'],
    then: {
      'buckets:1000': '1',
      burst: { set: ['o1'] },
      breaker: {
        hash: {
          state: 'open',
          signature: 'S',
          openCount: '2',
          openedAt: T,
          nextProbeAt: String(NOW + 2000),
          trialsLeft: '0',
        },
      },
    },
  },
  {
    name: 'admit: open says wait until the next probe',
    command: 'bulkorderAdmit',
    given: { breaker: { hash: { state: 'open', nextProbeAt: '2000000' } } },
    run: (r, k) => r.bulkorderAdmit(k('breaker')),
    returns: ['wait', '2000000'],
  },
  {
    name: 'admit: no state is closed: go',
    command: 'bulkorderAdmit',
    run: (r, k) => r.bulkorderAdmit(k('breaker')),
    returns: ['go', '0'],
    then: {},
  },
  {
    name: "closeBreaker: a half-open breaker closes, the trip's evidence goes, the burst is returned",
    command: 'bulkorderCloseBreaker',
    given: {
      breaker: { hash: { state: 'halfOpen', signature: 'S' } },
      burst: { set: ['o1'] },
      'failures:S': { zset: { a: 1 } },
      'orders:S': { zset: { o1: 1 } },
    },
    run: (r, k) => r.bulkorderCloseBreaker(...closeKeys(k), ...closeArgv(k, '')),
    returns: ['closed', 'api', 'o1'],
    then: { breaker: { hash: { state: 'closed', closedAt: T } } },
  },
  {
    name: 'closeBreaker: a trial of a customer the refusals never named: about those customers, exempt, no burst',
    command: 'bulkorderCloseBreaker',
    given: {
      breaker: { hash: { state: 'halfOpen', signature: 'S', class: 'refusal', customers: 'c1\nc2' } },
      burst: { set: ['o1'] },
      'customers:S': { zset: { c1: 1 } },
      answers: { hash: { c1: '{"status":403}', c9: '{"status":400}' } },
    },
    run: (r, k) => r.bulkorderCloseBreaker(...closeKeys(k), ...closeArgv(k, 'c9')),
    returns: ['closed', 'customers'],
    then: {
      breaker: { hash: { state: 'closed', closedAt: T } },
      exempt: { set: ['S|c1', 'S|c2'] },
      answers: { hash: { c1: '{"status":403}', c9: '{"status":400}' } },
      // c2's answer was not kept (expired): its held orders are sent as usual.
      refused: { hash: { '@closedAt': T, c1: '{"status":403}' } },
    },
    expires: { exempt: true, refused: true },
  },
  {
    name: 'closeBreaker: a trial of a refused customer: about the API, no refused customers kept, the burst returned',
    command: 'bulkorderCloseBreaker',
    given: {
      breaker: { hash: { state: 'halfOpen', signature: 'S', class: 'refusal', customers: 'c1\nc2' } },
      burst: { set: ['o1'] },
      answers: { hash: { c1: '{"status":403}' } },
    },
    run: (r, k) => r.bulkorderCloseBreaker(...closeKeys(k), ...closeArgv(k, 'c2')),
    returns: ['closed', 'api', 'o1'],
    then: { breaker: { hash: { state: 'closed', closedAt: T } }, answers: { hash: { c1: '{"status":403}' } } },
  },
  {
    name: 'readWindow: the attempts of the window and the server failures by label',
    command: 'bulkorderReadWindow',
    given: {
      'failures:F': {
        zset: { 'HTTP 503|a': NOW - 100, 'HTTP 503|b': NOW - 50, 'no answer|c': NOW, 'HTTP 500|old': NOW - 20_000 },
      },
      'buckets:1000': '6',
      'buckets:999': '4',
    },
    run: (r, k) => r.bulkorderReadWindow(k('failures:F'), NOW, 10_000, k('buckets:')),
    returns: [10, 3, expect.stringMatching(/^\{.*\}$/)],
  },
  {
    name: 'tickBreaker: an open breaker whose wait is over turns half-open with its trials',
    command: 'bulkorderTickBreaker',
    given: { breaker: { hash: { state: 'open', since: String(NOW - 1000), nextProbeAt: String(NOW - 1) } } },
    run: (r, k) => r.bulkorderTickBreaker(k('breaker'), k('paused-by'), ...tickArgv),
    returns: ['halfOpen', 'halfOpen'],
    then: {
      breaker: {
        hash: {
          state: 'halfOpen',
          since: String(NOW - 1000),
          nextProbeAt: String(NOW - 1),
          trialsLeft: '2',
          halfOpenAt: T,
          anyTrialAt: String(NOW + 5000),
        },
      },
    },
  },
  {
    name: 'tickBreaker: a person paused the queue: it stays open',
    command: 'bulkorderTickBreaker',
    given: {
      breaker: { hash: { state: 'open', since: String(NOW - 1000), nextProbeAt: String(NOW - 1) } },
      'paused-by': 'ann',
    },
    run: (r, k) => r.bulkorderTickBreaker(k('breaker'), k('paused-by'), ...tickArgv),
    returns: ['none', 'open'],
  },
  {
    name: 'takeRate: slots spaced 1000/rate ms apart from the next free one',
    command: 'bulkorderTakeRate',
    given: { rate: { hash: { rate: '10', nextAt: '0' } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 2, 0, 0, 1),
    returns: [T, '100', '1'],
    then: { rate: { hash: { rate: '10', nextAt: String(NOW + 200) } } },
  },
  {
    name: 'takeRate: far below the rate of the last 429, it grows by increase / rate per request',
    command: 'bulkorderTakeRate',
    given: { rate: { hash: { rate: '8', nextAt: '0', hint: '20' } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 16, 0, 4, 4),
    returns: [T, '62.5', '1'],
    then: { rate: { hash: { rate: '16', nextAt: String(NOW + 1000), hint: '20' } } },
  },
  {
    name: 'takeRate: within 5% of the rate of the last 429, it grows slowProbe times slower',
    command: 'bulkorderTakeRate',
    given: { rate: { hash: { rate: '8', nextAt: '0', hint: '7.8' } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 16, 0, 4, 4),
    returns: [T, '100', '1'],
    then: { rate: { hash: { rate: '10', nextAt: String(NOW + 1600), hint: '7.8' } } },
  },
  {
    name: 'takeRate: no rate in force: no slots',
    command: 'bulkorderTakeRate',
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 2, 0, 0, 1),
    returns: ['0', '0', '0'],
    then: {},
  },
  {
    name: 'cutRate: a first 429 starts half of what the live workers sent, no slot before Retry-After',
    command: 'bulkorderCutRate',
    given: { workers: { zset: { w1: NOW, w2: NOW } } },
    run: (r, k) =>
      r.bulkorderCutRate(
        k('rate'),
        k('workers'),
        ...argv('cutRate', {
          now: NOW,
          retryAfterMs: 2000,
          floor: 1,
          decrease: 0.5,
          grantedAt: NOW,
          localRate: 10,
          staleMs: 5000,
          expireMs: 60_000,
          paced: '0',
          startShare: 0.9,
          bucketPrefix: '',
          accepted: 0,
        }),
      ),
    returns: '10',
    then: {
      workers: { zset: { w1: NOW, w2: NOW } },
      rate: { hash: { rate: '10', lastCut: T, nextAt: String(NOW + 2000), cuts: '1', hint: '20' } },
    },
    expires: { rate: true },
  },
  {
    name: 'cutRate: measured, a first 429 starts the decrease below what every worker had accepted in the last second',
    command: 'bulkorderCutRate',
    // NOW is 1,000,000 ms: second 1000 has just begun, so second 999 is still wholly in the window.
    given: { 'n:1000': '4', 'n:999': '40', workers: { zset: { w1: NOW, w2: NOW } } },
    run: (r, k) =>
      r.bulkorderCutRate(
        k('rate'),
        k('workers'),
        ...argv('cutRate', {
          now: NOW,
          retryAfterMs: 1000,
          floor: 1,
          decrease: 0.1,
          grantedAt: NOW,
          localRate: 200,
          staleMs: 5000,
          expireMs: 60_000,
          paced: '0',
          startShare: 0.9,
          bucketPrefix: k('n:'),
          accepted: 6,
        }),
      ),
    returns: '45',
    then: {
      'n:1000': '4',
      'n:999': '40',
      workers: { zset: { w1: NOW, w2: NOW } },
      rate: { hash: { rate: '45', lastCut: T, nextAt: String(NOW + 1000), cuts: '1', hint: '50' } },
    },
    expires: { rate: true },
  },
  {
    name: 'cutRate: a 429 to a request paced after the last cut: cut by the decrease, the old rate kept as the hint',
    command: 'bulkorderCutRate',
    given: { rate: { hash: { rate: '40', lastCut: String(NOW - 3000), nextAt: T, cuts: '1', hint: '50' } } },
    run: (r, k) =>
      r.bulkorderCutRate(
        k('rate'),
        k('workers'),
        ...argv('cutRate', {
          now: NOW,
          retryAfterMs: 1000,
          floor: 1,
          decrease: 0.1,
          grantedAt: NOW - 100,
          localRate: 10,
          staleMs: 5000,
          expireMs: 60_000,
          paced: '1',
          startShare: 0.9,
          bucketPrefix: k('n:'),
          accepted: 0,
        }),
      ),
    returns: '36',
    then: { rate: { hash: { rate: '36', lastCut: T, nextAt: T, cuts: '2', hint: '40' } } },
    expires: { rate: true },
  },
  {
    name: 'parkedCauses: the cause fields of each record of the slice; a gone record by key only',
    command: 'bulkorderParkedCauses',
    given: {
      'dead-index': { zset: { o1: 1, o2: 2 } },
      'dead:o1': '{"batchId":"B1","httpStatus":422,"code":"E","message":"bad","parkedAt":5,"payload":{"big":1}}',
    },
    run: (r, k) => r.bulkorderParkedCauses(k('dead-index'), k('dead:'), 0, 999),
    returns: ['o1', 'B1', '422', 'E', 'bad', '5', 'o2', '', '', '', '', ''],
  },
  {
    name: 'pruneParked: records at or before the cutoff go with their index members',
    command: 'bulkorderPruneParked',
    given: { 'dead-index': { zset: { o1: 100, o2: 5000 } }, 'dead:o1': 'r1', 'dead:o2': 'r2' },
    run: (r, k) => r.bulkorderPruneParked(k('dead-index'), 1000, k('dead:')),
    returns: 1,
    then: { 'dead-index': { zset: { o2: 5000 } }, 'dead:o2': 'r2' },
  },
  {
    name: 'dropGhosts: only the index members whose record is gone',
    command: 'bulkorderDropGhosts',
    given: { 'dead-index': { zset: { o1: 1, o2: 2 } }, 'dead:o2': 'r2' },
    run: (r, k) => r.bulkorderDropGhosts(k('dead-index'), k('dead:'), 'o1', 'o2'),
    returns: 1,
    then: { 'dead-index': { zset: { o2: 2 } }, 'dead:o2': 'r2' },
  },
  {
    name: 'extendIfOwner: the owner extends its lock',
    command: 'bulkorderExtendIfOwner',
    given: { lock: 'me' },
    run: (r, k) => r.bulkorderExtendIfOwner(k('lock'), 'me', 60_000),
    returns: 1,
    expires: { lock: true },
  },
  {
    name: "extendIfOwner: another's lock is left alone",
    command: 'bulkorderExtendIfOwner',
    given: { lock: 'other' },
    run: (r, k) => r.bulkorderExtendIfOwner(k('lock'), 'me', 60_000),
    returns: 0,
    expires: { lock: false },
  },
  {
    name: 'deleteIfOwner: the owner releases its lock',
    command: 'bulkorderDeleteIfOwner',
    given: { lock: 'me' },
    run: (r, k) => r.bulkorderDeleteIfOwner(k('lock'), 'me'),
    returns: 1,
    then: {},
  },
  {
    name: "deleteIfOwner: another's lock stays",
    command: 'bulkorderDeleteIfOwner',
    given: { lock: 'other' },
    run: (r, k) => r.bulkorderDeleteIfOwner(k('lock'), 'me'),
    returns: 0,
  },
  {
    name: 'invalidateToken: the token that failed is dropped',
    command: 'bulkorderInvalidateToken',
    given: { token: { hash: { id: 't1', value: 'v' } } },
    run: (r, k) => r.bulkorderInvalidateToken(k('token'), 't1'),
    returns: 1,
    then: {},
  },
  {
    name: 'invalidateToken: a newer token stays',
    command: 'bulkorderInvalidateToken',
    given: { token: { hash: { id: 't2', value: 'v' } } },
    run: (r, k) => r.bulkorderInvalidateToken(k('token'), 't1'),
    returns: 0,
  },
  {
    name: 'heartbeat: an importing batch renews its owner key',
    command: 'bulkorderHeartbeat',
    given: { 'batch:B1': { hash: { importState: 'importing' } } },
    run: (r, k) => r.bulkorderHeartbeat(k('batch:B1'), k('owner:B1'), 10_000),
    returns: 1,
    then: { 'batch:B1': { hash: { importState: 'importing' } }, 'owner:B1': '1' },
    expires: { 'owner:B1': true },
  },
  {
    name: 'heartbeat: a batch taken for dead tells its importer to stop',
    command: 'bulkorderHeartbeat',
    given: { 'batch:B1': { hash: { importState: 'interrupted' } } },
    run: (r, k) => r.bulkorderHeartbeat(k('batch:B1'), k('owner:B1'), 10_000),
    returns: 0,
  },
  {
    name: 'closeOrphaned: an importing batch whose owner lapsed is interrupted',
    command: 'bulkorderCloseOrphaned',
    given: { 'batch:B1': { hash: { importState: 'importing' } }, importing: { set: ['B1'] } },
    run: (r, k) => r.bulkorderCloseOrphaned(k('batch:B1'), k('owner:B1'), k('importing'), 'B1', NOW),
    returns: 'closed',
    then: { 'batch:B1': { hash: { importState: 'interrupted', interruptedAt: T } } },
  },
  {
    name: 'closeOrphaned: an importer that beats keeps its batch',
    command: 'bulkorderCloseOrphaned',
    given: { 'batch:B1': { hash: { importState: 'importing' } }, 'owner:B1': '1', importing: { set: ['B1'] } },
    run: (r, k) => r.bulkorderCloseOrphaned(k('batch:B1'), k('owner:B1'), k('importing'), 'B1', NOW),
    returns: 'live',
  },
];

const redis = defineScripts(testRedis());
const prefixes: string[] = [];

afterEach(async () => {
  for (const prefix of prefixes.splice(0)) await deletePrefix(redis, prefix);
});
afterAll(() => {
  redis.disconnect();
});

describe('every Lua script, row by row (src/lua/scripts/)', () => {
  it('has at least one row per command', () => {
    expect(SCRIPT_COMMANDS.filter((command) => !rows.some((row) => row.command === command))).toEqual([]);
  });

  for (const row of rows) {
    it(row.name, async () => {
      const prefix = testPrefix('lua');
      prefixes.push(prefix);
      const k = (name: string): string => `${prefix}:${name}`;
      await seedState(redis, prefix, row.given ?? {});
      expect(await row.run(redis, k)).toEqual(row.returns);
      expect(await readState(redis, prefix)).toEqual(row.then ?? row.given ?? {});
      for (const [name, expires] of Object.entries(row.expires ?? {}))
        expect([name, (await redis.pttl(k(name))) > 0]).toEqual([name, expires]);
    });
  }
});
