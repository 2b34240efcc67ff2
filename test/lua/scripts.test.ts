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
/** cutRate's arguments as most rows give them (a paced 429, no counts); each row names what differs. */
const CUT_RATE = {
  now: NOW,
  retryAfterMs: 1000,
  floor: 1,
  decrease: 0.1,
  grantedAt: NOW,
  localRate: 10,
  staleMs: 5000,
  expireMs: 60_000,
  paced: '1',
  startShare: 0.9,
  bucketPrefix: '',
  accepted: 0,
  measuredStart: '0',
  ownAccepted: 0,
};

/** claimMany of the one record o1 (an earlier release's job of one: jobId ''), the gate at `gate`. */
const claimO1 = (r: Redis, gate: string, ledger: string, askGate: '0' | '1', customer?: string) =>
  r.bulkorderClaimMany(
    3,
    gate,
    ledger.replace(/ledger:o1$/, 'sending'),
    ledger,
    't1',
    NOW,
    RET,
    'hold',
    askGate,
    '',
    ledger.slice(0, -'o1'.length),
    ...(customer === undefined ? [] : [customer]),
  );
/** reserveChunk of the one record o1 into chunk B1.1 (`alreadyCounted` as given). */
const reserveO1 = (r: Redis, k: (name: string) => string, fingerprint: string, alreadyCounted: '0' | '1' = '0') =>
  r.bulkorderReserveChunk(
    4,
    k('unqueued'),
    k('unqueued-jobs'),
    k('batch:B1'),
    k('ledger:o1'),
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
    alreadyCounted,
    'o1',
    fingerprint,
    'a=1',
    '{"key":"o1"}',
  );
const settleArgv = (values: Partial<Parameters<typeof argv<'settleOverMemory'>>[1]>) =>
  argv('settleOverMemory', {
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
    prefix: '',
    ...values,
  });
/** settleMany of the one record o1 of batch B1, its per-record values as settleArgv names them. */
const settleO1 = (
  r: Redis,
  k: (name: string) => string,
  values: {
    newState?: string;
    remoteId?: string;
    httpStatus?: string;
    code?: string;
    message?: string;
    parkedRecord?: string;
  },
) => {
  const a = {
    token: 't1',
    newState: 'delivered',
    orderKey: 'o1',
    remoteId: '',
    httpStatus: '',
    code: '',
    message: '',
    parkedRecord: '',
    answered5xx: '0',
    ...values,
  };
  return r.bulkorderSettleMany(
    6,
    k('dead-index'),
    k('held-index'),
    k('ledger:o1'),
    k('batch:B1'),
    k('dead:o1'),
    k('held:o1'),
    NOW,
    RET,
    RET,
    k('').slice(0, -1),
    a.token,
    a.newState,
    a.orderKey,
    a.remoteId,
    a.httpStatus,
    a.code,
    a.message,
    a.parkedRecord,
    a.answered5xx,
  );
};
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
    batch: 'B1',
    minBatches: 1,
  });
const failureKeys = (k: (name: string) => string) =>
  [k('breaker'), k('failures:S'), k('orders:S'), k('burst'), k('customers:S'), k('exempt'), k('batches:S')] as const;
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
    name: 'batchGate: a batch whose canary passed sends its records, and ends one its canary refused with that answer',
    command: 'bulkorderBatchGate',
    given: {
      circuit: { hash: { state: 'flowing' } },
      refused: { hash: { o1: '{"kind":"permanent","status":422}' } },
    },
    run: (r, k) =>
      r.bulkorderBatchGate(k('circuit'), k('granted'), k('refused'), k('batch:B1'), 20, RET, 1000, 1500, 'o1', 'o2'),
    returns: ['flowing', 1500, 1, 'answer:{"kind":"permanent","status":422}', 'go'],
  },
  {
    name: 'batchGate: a cancelled batch ends every record unsent',
    command: 'bulkorderBatchGate',
    given: { circuit: { hash: { state: 'cancelled' } } },
    run: (r, k) =>
      r.bulkorderBatchGate(k('circuit'), k('granted'), k('refused'), k('batch:B1'), 20, RET, 1000, 1500, 'o1'),
    returns: ['cancelled', 1500, 0, 'cancel'],
  },
  {
    name: 'batchGate: nothing of a batch goes while its file is still read, even flowing (`read`: its worker wakes it once the read ends); its canary is not granted',
    command: 'bulkorderBatchGate',
    given: {
      circuit: { hash: { state: 'flowing' } },
      'batch:B1': { hash: { importState: 'importing', enqueued: '500' } },
    },
    run: (r, k) =>
      r.bulkorderBatchGate(k('circuit'), k('granted'), k('refused'), k('batch:B1'), 20, RET, 1000, 1500, 'o1', 'o2'),
    returns: ['flowing', 1500, 0, 'read', 'read'],
  },
  {
    name: 'batchGate: once its file is read (readAt) a batch still queued goes as soon as a whole canary is queued, its canary granted',
    command: 'bulkorderBatchGate',
    given: {
      circuit: { hash: { state: 'canary' } },
      'batch:B1': { hash: { importState: 'importing', readAt: '1', enqueued: '20' } },
    },
    run: (r, k) =>
      r.bulkorderBatchGate(k('circuit'), k('granted'), k('refused'), k('batch:B1'), 20, RET, 1000, 1500, 'o1', 'o2'),
    returns: ['canary', 1500, 0, 'go', 'go'],
    then: {
      circuit: { hash: { state: 'canary' } },
      granted: { set: ['o1', 'o2'] },
      'batch:B1': { hash: { importState: 'importing', readAt: '1', enqueued: '20' } },
    },
  },
  {
    name: 'batchGate: a batch read but with less than a canary queued waits as `read` (its canary size is not final yet)',
    command: 'bulkorderBatchGate',
    given: {
      circuit: { hash: { state: 'flowing' } },
      'batch:B1': { hash: { importState: 'importing', readAt: '1', enqueued: '19' } },
    },
    run: (r, k) =>
      r.bulkorderBatchGate(k('circuit'), k('granted'), k('refused'), k('batch:B1'), 20, RET, 1000, 1500, 'o1'),
    returns: ['flowing', 1500, 0, 'read'],
  },
  {
    name: 'batchGate: a batch whose file changed while it was read ends every record unsent',
    command: 'bulkorderBatchGate',
    given: {
      circuit: { hash: { state: 'canary' } },
      'batch:B1': { hash: { importState: 'failed', failCode: 'FILE_CHANGED_WHILE_READ', enqueued: '500' } },
    },
    run: (r, k) =>
      r.bulkorderBatchGate(k('circuit'), k('granted'), k('refused'), k('batch:B1'), 20, RET, 1000, 1500, 'o1'),
    returns: ['canary', 1500, 0, 'cancel'],
  },
  {
    name: 'batchGate: in its canary, a record the canary refused waits and one beyond a full canary waits',
    command: 'bulkorderBatchGate',
    given: {
      circuit: { hash: { state: 'canary' } },
      granted: { set: ['o1'] },
      refused: { hash: { o1: '{}' } },
      'batch:B1': { hash: { importState: 'imported', enqueued: '1' } },
    },
    run: (r, k) =>
      r.bulkorderBatchGate(k('circuit'), k('granted'), k('refused'), k('batch:B1'), 20, RET, 1000, 1500, 'o1', 'o2'),
    returns: ['canary', 1500, 1, 'wait', 'wait'],
  },
  {
    name: 'batchOutcome: a canary answer accepted is counted once; the canary goes on judging',
    command: 'bulkorderBatchOutcome',
    given: { circuit: { hash: { state: 'canary' } }, granted: { set: ['o1', 'o2'] } },
    run: (r, k) =>
      r.bulkorderBatchOutcome(
        k('circuit'),
        k('granted'),
        k('refused'),
        k('batch:B1'),
        k('held-batches'),
        ...argv('batchOutcome', {
          orderKey: 'o1',
          kind: 'accepted',
          signature: '',
          answer: '',
          canaryOrders: 20,
          refusedPercent: 50,
          probeMs: 1000,
          maxProbeMs: 8000,
          ttlMs: RET,
          batchId: 'B1',
          status: '',
          code: '',
          message: '',
          minRefused: 5,
        }),
      ),
    returns: ['none', 'count'],
    then: {
      circuit: { hash: { state: 'canary', 'd:o1': '1', done: '1', accepted: '1' } },
      granted: { set: ['o1', 'o2'] },
    },
  },
  {
    name: 'reserveChunk: a dead letter of the batch goes back into it (alreadyCounted): marked, no longer counted dead',
    command: 'bulkorderReserveChunk',
    given: {
      'ledger:o1': { hash: { s: 'dead', b: 'B1', u: '1', q: '4' } },
      'batch:B1': { hash: { id: 'B1', dead: '1' } },
    },
    run: (r, k) => reserveO1(r, k, '', '1'),
    returns: ['reserved', 'B1', '', '', ''],
    then: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T, q: '1', jc: '1' } },
      'batch:B1': { hash: { id: 'B1', dead: '0' } },
      'unqueued-jobs': { hash: { 'B1.1': '{"records":[{"key":"o1"}]}' } },
      unqueued: { zset: { 'B1.1': NOW } },
    },
    expires: { 'ledger:o1': true },
  },
  {
    name: 'reserveChunk: a dead letter with the same content is refused before, nothing written',
    command: 'bulkorderReserveChunk',
    given: {
      'ledger:o1': { hash: { s: 'dead', b: 'B0', f: 'f1', u: '7', q: '2' } },
      'batch:B0': { hash: { id: 'B0', importState: 'imported' } },
    },
    run: (r, k) => reserveO1(r, k, 'f1'),
    returns: ['refused', 'B0', '', '7', 'dead'],
  },
  {
    name: 'reserveChunk: the same content cancelled with a batch whose file changed while read (never sent) is reserved',
    command: 'bulkorderReserveChunk',
    given: {
      'ledger:o1': { hash: { s: 'dead', b: 'B0', f: 'f1', u: '7', q: '2' } },
      'batch:B0': { hash: { id: 'B0', importState: 'failed', failCode: 'FILE_CHANGED_WHILE_READ' } },
    },
    run: (r, k) => reserveO1(r, k, 'f1'),
    returns: ['reserved', 'B0', '', '', ''],
    then: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T, q: '1', f: 'f1', fp: 'a=1' } },
      'batch:B0': { hash: { id: 'B0', importState: 'failed', failCode: 'FILE_CHANGED_WHILE_READ' } },
      'unqueued-jobs': { hash: { 'B1.1': '{"records":[{"key":"o1"}]}' } },
      unqueued: { zset: { 'B1.1': NOW } },
    },
    expires: { 'ledger:o1': true },
  },
  {
    name: 'reserveChunk: a key delivered with other content is a conflict, nothing written',
    command: 'bulkorderReserveChunk',
    given: { 'ledger:o1': { hash: { s: 'delivered', b: 'B0', f: 'f0', fp: 'a=0', d: '500', u: '600' } } },
    run: (r, k) => reserveO1(r, k, 'f1'),
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
        '0',
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
    name: "confirmChunk: an earlier release's job of one (its key as id): the kept job goes and the batch counts it once",
    command: 'bulkorderConfirmChunk',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1' } },
      unqueued: { zset: { o1: 1 } },
      'unqueued-jobs': { hash: { o1: '{}' } },
      'batch:B1': { hash: { id: 'B1', enqueued: '0' } },
    },
    run: (r, k) =>
      r.bulkorderConfirmChunk(4, k('batch:B1'), k('unqueued'), k('unqueued-jobs'), k('ledger:o1'), 'B1', 'o1', ''),
    returns: 1,
    then: { 'ledger:o1': { hash: { s: 'queued', b: 'B1' } }, 'batch:B1': { hash: { id: 'B1', enqueued: '1' } } },
  },
  {
    name: "confirmChunk: an earlier release's job of one whose key another batch reserved since: its kept job stays",
    command: 'bulkorderConfirmChunk',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B2' } },
      unqueued: { zset: { o1: 1 } },
      'unqueued-jobs': { hash: { o1: '{}' } },
    },
    run: (r, k) =>
      r.bulkorderConfirmChunk(4, k('batch:B1'), k('unqueued'), k('unqueued-jobs'), k('ledger:o1'), 'B1', 'o1', ''),
    returns: 0,
  },
  {
    name: 'confirmChunk: a record its batch counted before (the breaker burst): its mark goes, not counted again',
    command: 'bulkorderConfirmChunk',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: 'r1', jc: '1' } },
      unqueued: { zset: { 'B1.r1': 1 } },
      'unqueued-jobs': { hash: { 'B1.r1': '{}' } },
      'batch:B1': { hash: { id: 'B1', enqueued: '1' } },
    },
    run: (r, k) =>
      r.bulkorderConfirmChunk(4, k('batch:B1'), k('unqueued'), k('unqueued-jobs'), k('ledger:o1'), 'B1', 'B1.r1', 'r1'),
    returns: 0,
    then: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: 'r1' } },
      'batch:B1': { hash: { id: 'B1', enqueued: '1' } },
    },
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
    name: 'claimMany: a queued order is sending under the token, attempt 1',
    command: 'bulkorderClaimMany',
    given: { 'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T } } },
    run: (r, k) => claimO1(r, k('ledger:o1'), k('ledger:o1'), '0'),
    returns: ['go', '0', 'claimed', '1'],
    then: { 'ledger:o1': { hash: { s: 'sending', b: 'B1', u: T, t: 't1', a: '1' } }, sending: { zset: { o1: NOW } } },
  },
  {
    name: 'claimMany: a record whose entry vanished (evicted) is vanished, not moved, and nothing is claimed',
    command: 'bulkorderClaimMany',
    given: { 'ledger:o2': { hash: { s: 'queued', b: 'B1', q: '1', u: T } } },
    run: (r, k) =>
      r.bulkorderClaimMany(
        4,
        k('breaker'),
        k('sending'),
        k('ledger:o1'),
        k('ledger:o2'),
        't1',
        NOW,
        RET,
        'hold',
        '0',
        'B1.1',
        k('ledger:'),
      ),
    returns: ['go', '0', 'vanished', '', 'claimed', '1'],
    then: {
      'ledger:o2': { hash: { s: 'sending', b: 'B1', q: '1', u: T, t: 't1', a: '1' } },
      sending: { zset: { o2: NOW } },
    },
  },
  {
    name: 'claimMany: the gate asked while the breaker is open says wait, nothing claimed',
    command: 'bulkorderClaimMany',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1' } },
      breaker: { hash: { state: 'open', nextProbeAt: '2000000' } },
    },
    run: (r, k) => claimO1(r, k('breaker'), k('ledger:o1'), '1'),
    returns: ['wait', '2000000'],
  },
  {
    name: 'claimMany: half-open after refusals of c1 and c2, an order of c1 waits a second, its trial kept for another',
    command: 'bulkorderClaimMany',
    given: { 'ledger:o1': { hash: { s: 'queued', b: 'B1' } }, breaker: { hash: refusedHalfOpen(NOW + 5000) } },
    run: (r, k) => claimO1(r, k('breaker'), k('ledger:o1'), '1', 'c1'),
    returns: ['wait', String(NOW + 1000)],
  },
  {
    name: 'claimMany: half-open after refusals of c1 and c2, an order of c3 is the trial',
    command: 'bulkorderClaimMany',
    given: { 'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T } }, breaker: { hash: refusedHalfOpen(NOW + 5000) } },
    run: (r, k) => claimO1(r, k('breaker'), k('ledger:o1'), '1', 'c3'),
    returns: ['trial', '0', 'claimed', '1'],
    then: {
      'ledger:o1': { hash: { s: 'sending', b: 'B1', u: T, t: 't1', a: '1' } },
      sending: { zset: { o1: NOW } },
      breaker: { hash: { ...refusedHalfOpen(NOW + 5000), trialsLeft: '0' } },
    },
  },
  {
    name: 'claimMany: half-open past anyTrialAt, an order of a refused customer is the trial (the queue holds no other)',
    command: 'bulkorderClaimMany',
    given: { 'ledger:o1': { hash: { s: 'queued', b: 'B1', u: T } }, breaker: { hash: refusedHalfOpen(NOW) } },
    run: (r, k) => claimO1(r, k('breaker'), k('ledger:o1'), '1', 'c1'),
    returns: ['trial', '0', 'claimed', '1'],
    then: {
      'ledger:o1': { hash: { s: 'sending', b: 'B1', u: T, t: 't1', a: '1' } },
      sending: { zset: { o1: NOW } },
      breaker: { hash: { ...refusedHalfOpen(NOW), trialsLeft: '0' } },
    },
  },
  {
    name: 'claimMany: a trial whose order was delivered meanwhile gives the trial back',
    command: 'bulkorderClaimMany',
    given: {
      'ledger:o1': { hash: { s: 'delivered', b: 'B1', r: '"r1"' } },
      breaker: { hash: { state: 'halfOpen', trialsLeft: '1' } },
    },
    run: (r, k) => claimO1(r, k('breaker'), k('ledger:o1'), '1'),
    returns: ['trial', '0', 'delivered', '"r1"'],
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
      r.bulkorderClaimMany(
        4,
        k('breaker'),
        k('sending'),
        k('ledger:o1'),
        k('ledger:o2'),
        't1',
        NOW,
        RET,
        'hold',
        '1',
        'B1.1',
        k('ledger:'),
      ),
    returns: ['trial', '0', 'claimed', '1', 'later', ''],
    then: {
      breaker: { hash: { state: 'halfOpen', trialsLeft: '0' } },
      'ledger:o1': { hash: { s: 'sending', b: 'B1', q: '1', u: T, t: 't1', a: '1' } },
      'ledger:o2': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
      sending: { zset: { o1: NOW } },
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
        4,
        k('breaker'),
        k('sending'),
        k('ledger:o1'),
        k('ledger:o2'),
        't1',
        NOW,
        RET,
        'hold',
        '1',
        'B1.1',
        k('ledger:'),
        'c1',
        'c3',
      ),
    returns: ['trial', '0', 'later', '', 'claimed', '1'],
    then: {
      breaker: { hash: { ...refusedHalfOpen(NOW + 5000), trialsLeft: '0' } },
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
      'ledger:o2': { hash: { s: 'sending', b: 'B1', q: '1', u: T, t: 't1', a: '1' } },
      sending: { zset: { o2: NOW } },
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
        4,
        k('breaker'),
        k('sending'),
        k('ledger:o1'),
        k('ledger:o2'),
        't1',
        NOW,
        RET,
        'hold',
        '1',
        'B1.1',
        k('ledger:'),
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
        4,
        k('breaker'),
        k('sending'),
        k('ledger:o1'),
        k('ledger:o2'),
        't1',
        NOW,
        RET,
        'hold',
        '1',
        'B1.1',
        k('ledger:'),
        'c1',
        'c3',
      ),
    returns: ['trial', '0', 'later', '', 'delivered', '"r1"'],
  },
  {
    name: 'settleMany of one delivered: the dead letter goes, the batch counts it delivered and a possible duplicate',
    command: 'bulkorderSettleMany',
    given: {
      'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1', a: '1', x: '1', h: '502', c: 'BAD_GATEWAY' } },
      'batch:B1': { hash: { id: 'B1', delivered: '0' } },
      'dead-index': { zset: { o1: 5 } },
      'dead:o1': 'rec',
    },
    run: (r, k) => settleO1(r, k, { remoteId: '"r1"', httpStatus: '201' }),
    returns: ['ok'],
    then: {
      'ledger:o1': { hash: { s: 'delivered', t: '', b: 'B1', a: '1', x: '1', u: T, d: T, r: '"r1"', h: '201' } },
      'batch:B1': { hash: { id: 'B1', delivered: '1', possibleDuplicates: '1' } },
      // Indexed for `review duplicates`, with the doubtful answer (the last failed attempt's status and code).
      duplicates: { zset: { o1: NOW } },
      'duplicate-info': { hash: { o1: `{"batch":"B1","at":${NOW},"status":502,"code":"BAD_GATEWAY"}` } },
    },
    expires: { 'ledger:o1': true },
  },
  {
    name: 'settleOverMemory (allow-oom) delivered: writes what settleMany writes',
    command: 'bulkorderSettleOverMemory',
    given: {
      'ledger:o1': { hash: { s: 'held', t: '', b: 'B1', a: '1' } },
      'batch:B1': { hash: { id: 'B1', held: '1' } },
      'held-index': { zset: { o1: 5 } },
      'held:o1': 'rec',
    },
    run: (r, k) =>
      r.bulkorderSettleOverMemory(
        ...settleKeys(k),
        ...settleArgv({ remoteId: '"r1"', httpStatus: '201', prefix: k('').slice(0, -1) }),
      ),
    returns: 'ok',
    then: {
      'ledger:o1': { hash: { s: 'delivered', t: '', b: 'B1', a: '1', u: T, d: T, r: '"r1"', h: '201' } },
      'batch:B1': { hash: { id: 'B1', held: '0', delivered: '1' } },
    },
    expires: { 'ledger:o1': true },
  },
  {
    name: 'settleMany: another token owns the order: lost, nothing written',
    command: 'bulkorderSettleMany',
    given: { 'ledger:o1': { hash: { s: 'sending', t: 't2', b: 'B1' } }, 'batch:B1': { hash: { id: 'B1' } } },
    run: (r, k) => settleO1(r, k, { newState: 'dead' }),
    returns: ['lost'],
  },
  {
    name: 'settleMany held: the entry persists, the held record expires, the batch counts it held',
    command: 'bulkorderSettleMany',
    given: { 'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1' } }, 'batch:B1': { hash: { id: 'B1' } } },
    run: (r, k) =>
      settleO1(r, k, { newState: 'held', code: 'NO_ANSWER', message: 'no answer', parkedRecord: '{"p":1}' }),
    returns: ['ok'],
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
        k('').slice(0, -1),
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
    name: 'release: held -> queued in a chunk of the new batch, marked, its job kept, the held record gone',
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
          prefix: k('').slice(0, -1),
          newBatch: 'B1',
          now: NOW,
          retentionMs: RET,
          orderKey: 'o1',
          who: 'ann',
          note: 'checked',
          jobJson: '{"j":1}',
          chunkId: 'B1.r1',
          chunkNumber: 'r1',
        }),
      ),
    returns: ['released', 'B0', 'rec'],
    then: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: 'r1', u: T, rv: 'released', rw: 'ann', rt: T, rn: 'checked' } },
      'unqueued-jobs': { hash: { 'B1.r1': '{"j":1}' } },
      unqueued: { zset: { 'B1.r1': NOW } },
    },
  },
  {
    name: 'unrelease: back on hold in its batch, the held record and its index member back',
    command: 'bulkorderUnrelease',
    given: {
      'ledger:o1': {
        hash: { s: 'queued', b: 'B1', q: 'r1', u: '1', rv: 'released', rw: 'ann', rt: '1', rn: 'checked' },
      },
      unqueued: { zset: { 'B1.r1': 1 } },
      'unqueued-jobs': { hash: { 'B1.r1': 'j' } },
    },
    run: (r, k) =>
      r.bulkorderUnrelease(
        ...unreleaseKeys(k),
        ...argv('unrelease', {
          prefix: k('').slice(0, -1),
          releasedBatch: 'B1',
          previousBatch: 'B0',
          now: NOW,
          retentionMs: RET,
          orderKey: 'o1',
          recordJson: 'rec',
          score: 5,
          recordTtlMs: 60_000,
          chunkId: 'B1.r1',
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
          prefix: k('').slice(0, -1),
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
      'batch-fixes:B0': { list: [`{"key":"o1","was":"held","how":"resolved","batch":"B0","by":"ann","at":${NOW}}`] },
    },
  },
  {
    name: 'release: the batch it was held in stops counting it held, counts it resolved, and keeps who released it where',
    command: 'bulkorderRelease',
    given: {
      'ledger:o1': { hash: { s: 'held', b: 'B0' } },
      'batch:B0': { hash: { id: 'B0', held: '1' } },
      'held:o1': 'rec',
      'held-index': { zset: { o1: 5 } },
    },
    run: (r, k) =>
      r.bulkorderRelease(
        ...unreleaseKeys(k),
        ...argv('release', {
          prefix: k('').slice(0, -1),
          newBatch: 'B1',
          now: NOW,
          retentionMs: RET,
          orderKey: 'o1',
          who: 'ann',
          note: 'not on the service',
          jobJson: '{"j":1}',
          chunkId: 'B1.r1',
          chunkNumber: 'r1',
        }),
      ),
    returns: ['released', 'B0', 'rec'],
    then: {
      'ledger:o1': {
        hash: { s: 'queued', b: 'B1', q: 'r1', u: T, rv: 'released', rw: 'ann', rt: T, rn: 'not on the service' },
      },
      'batch:B0': { hash: { id: 'B0', held: '0', resolved: '1' } },
      'batch-fixes:B0': {
        list: [
          `{"key":"o1","was":"held","how":"released","batch":"B1","by":"ann","note":"not on the service","at":${NOW}}`,
        ],
      },
      'unqueued-jobs': { hash: { 'B1.r1': '{"j":1}' } },
      unqueued: { zset: { 'B1.r1': NOW } },
    },
  },
  {
    name: 'settleMany delivered of a dead letter of an earlier batch (dead-letters retry): the dead letter goes and that batch counts it resolved',
    command: 'bulkorderSettleMany',
    given: {
      'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1' } },
      'batch:B1': { hash: { id: 'B1' } },
      'batch:B0': { hash: { id: 'B0', dead: '1' } },
      'dead-index': { zset: { o1: 5 } },
      'dead:o1': '{"batchId":"B0","key":"o1"}',
    },
    run: (r, k) => settleO1(r, k, { remoteId: '7', httpStatus: '201' }),
    returns: ['ok'],
    then: {
      'ledger:o1': { hash: { s: 'delivered', t: '', b: 'B1', u: T, d: T, r: '7', h: '201' } },
      'batch:B1': { hash: { id: 'B1', delivered: '1' } },
      'batch:B0': { hash: { id: 'B0', dead: '0', resolved: '1' } },
      'batch-fixes:B0': { list: [`{"key":"o1","was":"dead","how":"delivered","batch":"B1","at":${NOW}}`] },
    },
  },
  {
    name: 'settleMany dead again of a dead letter of an earlier batch: the new one replaces it, the earlier batch counts it moved on',
    command: 'bulkorderSettleMany',
    given: {
      'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1' } },
      'batch:B1': { hash: { id: 'B1' } },
      'batch:B0': { hash: { id: 'B0', dead: '1' } },
      'dead-index': { zset: { o1: 5 } },
      'dead:o1': '{"batchId":"B0","key":"o1"}',
    },
    run: (r, k) =>
      settleO1(r, k, {
        newState: 'dead',
        httpStatus: '422',
        code: 'E',
        message: 'bad',
        parkedRecord: '{"batchId":"B1"}',
      }),
    returns: ['ok'],
    then: {
      'ledger:o1': { hash: { s: 'dead', b: 'B1', u: T, h: '422', c: 'E', m: 'bad' } },
      'batch:B1': { hash: { id: 'B1', dead: '1' } },
      'batch:B0': { hash: { id: 'B0', dead: '0', movedOn: '1' } },
      'batch-fixes:B0': { list: [`{"key":"o1","was":"dead","how":"dead","batch":"B1","at":${NOW}}`] },
      'dead-index': { zset: { o1: NOW } },
      'dead:o1': '{"batchId":"B1"}',
    },
  },
  {
    name: 'settleMany delivered of a fixed row linked to the dead letter it replaces: that dead letter is closed as superseded',
    command: 'bulkorderSettleMany',
    given: {
      'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1' } },
      'ledger:old': { hash: { s: 'dead', b: 'B0' } },
      'batch:B1': { hash: { id: 'B1' } },
      'batch:B0': { hash: { id: 'B0', dead: '1' } },
      'dead-index': { zset: { old: 5 } },
      'dead:old': '{"batchId":"B0","key":"old"}',
      supersedes: { hash: { o1: 'old' } },
    },
    run: (r, k) => settleO1(r, k, { remoteId: '7', httpStatus: '201' }),
    returns: ['ok'],
    then: {
      'ledger:o1': { hash: { s: 'delivered', t: '', b: 'B1', u: T, d: T, r: '7', h: '201' } },
      'ledger:old': { hash: { s: 'dead', b: 'B0', sp: 'o1' } },
      'batch:B1': { hash: { id: 'B1', delivered: '1' } },
      'batch:B0': { hash: { id: 'B0', dead: '0', resolved: '1' } },
      'batch-fixes:B0': {
        list: [`{"key":"old","was":"dead","how":"superseded","batch":"B1","by":"o1","at":${NOW}}`],
      },
    },
  },
  {
    name: 'settleMany of three records: each leaves the sending index (one ZREM), only the linked one closes its dead letter',
    command: 'bulkorderSettleMany',
    given: {
      'ledger:o1': { hash: { s: 'sending', t: 't1', b: 'B1' } },
      'ledger:o2': { hash: { s: 'sending', t: 't1', b: 'B1' } },
      'ledger:o3': { hash: { s: 'sending', t: 't1', b: 'B1' } },
      'ledger:old': { hash: { s: 'dead', b: 'B0' } },
      'batch:B1': { hash: { id: 'B1' } },
      'batch:B0': { hash: { id: 'B0', dead: '1' } },
      'dead-index': { zset: { old: 5 } },
      'dead:old': '{"batchId":"B0","key":"old"}',
      supersedes: { hash: { o2: 'old', other: 'elsewhere' } },
      sending: { zset: { o1: 1, o2: 1, o3: 1, ox: 1 } },
    },
    run: (r, k) =>
      r.bulkorderSettleMany(
        14,
        k('dead-index'),
        k('held-index'),
        ...['o1', 'o2', 'o3'].flatMap((o) => [k(`ledger:${o}`), k('batch:B1'), k(`dead:${o}`), k(`held:${o}`)]),
        NOW,
        RET,
        RET,
        k('').slice(0, -1),
        ...['t1', 'delivered', 'o1', '5', '201', '', '', '', '0'],
        ...['t1', 'delivered', 'o2', '6', '201', '', '', '', '0'],
        ...['t1', 'queued', 'o3', '', '503', '', '', '', '1'],
      ),
    returns: ['ok', 'ok', 'ok'],
    then: {
      'ledger:o1': { hash: { s: 'delivered', t: '', b: 'B1', u: T, d: T, r: '5', h: '201' } },
      'ledger:o2': { hash: { s: 'delivered', t: '', b: 'B1', u: T, d: T, r: '6', h: '201' } },
      'ledger:o3': { hash: { s: 'queued', t: 't1', b: 'B1', u: T, h: '503', x: '1' } },
      'ledger:old': { hash: { s: 'dead', b: 'B0', sp: 'o2' } },
      'batch:B1': { hash: { id: 'B1', delivered: '2' } },
      'batch:B0': { hash: { id: 'B0', dead: '0', resolved: '1' } },
      'batch-fixes:B0': {
        list: [`{"key":"old","was":"dead","how":"superseded","batch":"B1","by":"o2","at":${NOW}}`],
      },
      supersedes: { hash: { other: 'elsewhere' } },
      sending: { zset: { ox: 1 } },
    },
  },
  {
    name: 'claimMany of three records: the two claimed go into the sending index at the claim time, the delivered one not',
    command: 'bulkorderClaimMany',
    given: {
      'ledger:o1': { hash: { s: 'queued', b: 'B1', q: '1', u: T } },
      'ledger:o2': { hash: { s: 'delivered', b: 'B1', q: '1', r: '"r2"' } },
      'ledger:o3': { hash: { s: 'queued', b: 'B1', q: '1', u: T, a: '2' } },
      sending: { zset: { ox: 1 } },
    },
    run: (r, k) =>
      r.bulkorderClaimMany(
        5,
        k('breaker'),
        k('sending'),
        k('ledger:o1'),
        k('ledger:o2'),
        k('ledger:o3'),
        't1',
        NOW,
        RET,
        'hold',
        '0',
        'B1.1',
        k('ledger:'),
      ),
    returns: ['go', '0', 'claimed', '1', 'delivered', '"r2"', 'claimed', '3'],
    then: {
      'ledger:o1': { hash: { s: 'sending', b: 'B1', q: '1', u: T, t: 't1', a: '1' } },
      'ledger:o2': { hash: { s: 'delivered', b: 'B1', q: '1', r: '"r2"' } },
      'ledger:o3': { hash: { s: 'sending', b: 'B1', q: '1', u: T, t: 't1', a: '3' } },
      sending: { zset: { ox: 1, o1: NOW, o3: NOW } },
    },
  },
  {
    name: 'purgeParked: the records go, their batch stops counting them dead (resolved), a purged fix with who; one gone is left alone',
    command: 'bulkorderPurgeParked',
    given: {
      'ledger:o1': { hash: { s: 'dead', b: 'B0' } },
      'batch:B0': { hash: { id: 'B0', dead: '1', resolved: '0' } },
      'dead:o1': '{"batchId":"B0","key":"o1"}',
      'dead-index': { zset: { o1: 5 } },
    },
    run: (r, k) =>
      r.bulkorderPurgeParked(
        3,
        k('dead-index'),
        k('dead:o1'),
        k('dead:o2'),
        NOW,
        k('').slice(0, -1),
        'dead',
        'ann',
        '',
        'o1',
        'o2',
      ),
    returns: 1,
    then: {
      'ledger:o1': { hash: { s: 'dead', b: 'B0' } },
      'batch:B0': { hash: { id: 'B0', dead: '0', resolved: '1' } },
      'batch-fixes:B0': { list: [`{"key":"o1","was":"dead","how":"purged","batch":"B0","by":"ann","at":${NOW}}`] },
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
          prefix: k('').slice(0, -1),
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
      'batches:S': { zset: { B1: NOW } },
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
      'batches:S': { zset: { B1: NOW } },
    },
  },
  {
    name: "recordFailure: a refusal seen in one batch only is that batch's: the API breaker stays closed (minBatches 2)",
    command: 'bulkorderRecordFailure',
    run: (r, k) => {
      const args = failureArgv(k, 1);
      args[args.length - 1] = 2;
      return r.bulkorderRecordFailure(...failureKeys(k), ...args);
    },
    returns: ['none', 'closed'],
    then: {
      'buckets:1000': '1',
      'failures:S': { zset: { 'HTTP 400|a1': NOW } },
      'orders:S': { zset: { o1: NOW } },
      'customers:S': { zset: { c1: NOW } },
      'batches:S': { zset: { B1: NOW } },
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
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 2, 0, 0, 1, 0, 0, 0, ''),
    returns: [T, '100', '1', '0', '', '1'],
    then: { rate: { hash: { rate: '10', nextAt: String(NOW + 200) } } },
  },
  {
    name: 'takeRate: far below the rate of the last 429, it grows by increase / rate per request',
    command: 'bulkorderTakeRate',
    given: { rate: { hash: { rate: '8', nextAt: '0', hint: '20' } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 16, 0, 4, 4, 0.3, 2000, 0, ''),
    returns: [T, '62.5', '1', '0', '', '1'],
    then: { rate: { hash: { rate: '16', nextAt: String(NOW + 1000), hint: '20' } } },
  },
  {
    name: 'takeRate: within 5% of the rate of the last 429 and a 429 within quietMs, it grows slowProbe times slower, at most 1% of the rate a second',
    command: 'bulkorderTakeRate',
    // 100 requests at 20/s (5 s of sending): 100 / 4 would be +25/s; 1% of 20 is +0.2/s, so +1.
    given: { rate: { hash: { rate: '20', nextAt: '0', hint: '20', last429: String(NOW - 1000) } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 100, 0, 100, 4, 0.3, 2000, 0, ''),
    returns: [T, '47.619047619048', '1', '0', '', '1'],
    then: {
      rate: { hash: { rate: '21', nextAt: '1004761.9047619', hint: '20', last429: String(NOW - 1000) } },
    },
  },
  {
    name: 'takeRate: within 5% of the rate of the last 429 with no 429 for quietMs, the limit rose: it grows by probe of itself per second',
    command: 'bulkorderTakeRate',
    // 20 requests at 20/s (1 s of sending) with probe 0.5: x1.5.
    given: { rate: { hash: { rate: '20', nextAt: '0', hint: '20', last429: String(NOW - 3000) } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 20, 0, 2, 4, 0.5, 2000, 0, ''),
    returns: [T, '33.333333333333', '1', '0', '', '1'],
    then: {
      rate: { hash: { rate: '30', nextAt: '1000666.6666667', hint: '20', last429: String(NOW - 3000) } },
    },
  },
  {
    name: 'takeRate: more than 5% below the rate of the last 429, at least 10% of the rate a second',
    command: 'bulkorderTakeRate',
    // 250 requests at 100/s (2.5 s of sending): +2/s would be +5; 10% of 100 a second is +25.
    given: { rate: { hash: { rate: '100', nextAt: '0', hint: '200' } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 250, 0, 2, 1, 0.5, 2000, 0, ''),
    returns: [T, '8', '1', '0', '', '1'],
    then: { rate: { hash: { rate: '125', nextAt: String(NOW + 2000), hint: '200' } } },
  },
  {
    name: 'takeRate: more than 5% above the rate of the last 429, the limit rose: it grows by probe of itself per second',
    command: 'bulkorderTakeRate',
    // 20 requests at 20/s: one second of sending, so the rate doubles at probe 1 (100%/s).
    given: { rate: { hash: { rate: '20', nextAt: '0', hint: '10' } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 20, 0, 2, 4, 1, 2000, 0, ''),
    returns: [T, '25', '1', '0', '', '1'],
    then: { rate: { hash: { rate: '40', nextAt: String(NOW + 500), hint: '10' } } },
  },
  {
    name: 'takeRate: above the rate of the last 429 but a 429 came within quietMs: 1% of the rate a second at most',
    command: 'bulkorderTakeRate',
    // 20 requests at 20/s: 5 / 4 would be +1.25/s; 1% of 20 is +0.2/s (additive growth carried it 25% past the limit).
    given: { rate: { hash: { rate: '20', nextAt: '0', hint: '10', last429: String(NOW - 1000) } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 20, 0, 5, 4, 1, 2000, 0, ''),
    returns: [T, '49.50495049505', '1', '0', '', '1'],
    then: {
      rate: { hash: { rate: '20.2', nextAt: '1000990.0990099', hint: '10', last429: String(NOW - 1000) } },
    },
  },
  {
    name: "takeRate: a rate capped 5% below the hint and stored a rounding below it still grows (the slow zone's step)",
    command: 'bulkorderTakeRate',
    // 0.95 x 10.3 = 9.785, stored as 9.7849999999999: below the zone it was capped at again and again, and stuck.
    given: { rate: { hash: { rate: '9.7849999999999', nextAt: '0', hint: '10.3', last429: String(NOW - 1000) } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 10, 0, 2, 1, 0.5, 5000, 0, ''),
    returns: [T, '101.16337885685', '1', '0', '', '1'],
    then: {
      rate: { hash: { rate: '9.8849999999999', nextAt: '1001011.6337886', hint: '10.3', last429: String(NOW - 1000) } },
    },
  },
  {
    name: 'takeRate: with a horizon, whole waves in order while their slots lie within it',
    command: 'bulkorderTakeRate',
    // 10 req/s, the next free slot 300 ms ahead: 1000 ms of horizon holds slots at +300 .. +1000 (8 of them).
    given: { rate: { hash: { rate: '10', nextAt: String(NOW + 300), lowered: '5', lowerings: '5:2;' } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 15, 0, 0, 1, 0, 0, 1000, '5,3,7'),
    returns: [String(NOW + 300), '100', '1', '5', '5:2;', '2'],
    then: { rate: { hash: { rate: '10', nextAt: String(NOW + 1100), lowered: '5', lowerings: '5:2;' } } },
  },
  {
    name: 'takeRate: with a horizon, a first wave beyond it is told when to come back; nothing granted',
    command: 'bulkorderTakeRate',
    // 10 slots at 10 req/s from +2000: its last at +2900 fits a 1000 ms horizon from +1900.
    given: { rate: { hash: { rate: '10', nextAt: String(NOW + 2000) } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 10, 0, 0, 1, 0, 0, 1000, '10'),
    returns: [String(NOW + 1900), '0', '2', '0', ''],
    then: { rate: { hash: { rate: '10', nextAt: String(NOW + 2000) } } },
  },
  {
    name: 'takeRate: with a horizon, a first wave larger than it is granted once the schedule is free',
    command: 'bulkorderTakeRate',
    given: { rate: { hash: { rate: '10', nextAt: String(NOW - 50) } } },
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 20, 0, 0, 1, 0, 0, 1000, '20'),
    returns: [T, '100', '1', '0', '', '1'],
    then: { rate: { hash: { rate: '10', nextAt: String(NOW + 2000) } } },
  },
  {
    name: 'takeRate: no rate in force: no slots',
    command: 'bulkorderTakeRate',
    run: (r, k) => r.bulkorderTakeRate(k('rate'), NOW, 2, 0, 0, 1, 0, 0, 0, ''),
    returns: ['0', '0', '0', '0', ''],
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
        ...argv('cutRate', { ...CUT_RATE, retryAfterMs: 2000, decrease: 0.5, paced: '0' }),
      ),
    returns: ['10', '0', ''],
    then: {
      workers: { zset: { w1: NOW, w2: NOW } },
      rate: {
        hash: { rate: '10', lastCut: T, nextAt: String(NOW + 2000), cuts: '1', hint: '20', last429: String(NOW) },
      },
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
          ...CUT_RATE,
          localRate: 200,
          paced: '0',
          bucketPrefix: k('n:'),
          accepted: 6,
          measuredStart: '1',
        }),
      ),
    returns: ['45', '0', ''],
    then: {
      'n:1000': '4',
      'n:999': '40',
      workers: { zset: { w1: NOW, w2: NOW } },
      rate: {
        hash: { rate: '45', lastCut: T, nextAt: String(NOW + 1000), cuts: '1', hint: '50', last429: String(NOW) },
      },
    },
    expires: { rate: true },
  },
  {
    name: "cutRate: measured, a first 429 before other workers added their counts starts from this worker's accepted rate times the live workers",
    command: 'bulkorderCutRate',
    // The shared counts hold 3 (the other worker adds its own every 250 ms); this one accepted 25 over the last second.
    given: { 'n:1000': '2', workers: { zset: { w1: NOW, w2: NOW } } },
    run: (r, k) =>
      r.bulkorderCutRate(
        k('rate'),
        k('workers'),
        ...argv('cutRate', {
          ...CUT_RATE,
          localRate: 200,
          paced: '0',
          bucketPrefix: k('n:'),
          accepted: 1,
          measuredStart: '1',
          ownAccepted: 25,
        }),
      ),
    returns: ['45', '0', ''],
    then: {
      'n:1000': '2',
      workers: { zset: { w1: NOW, w2: NOW } },
      rate: {
        hash: { rate: '45', lastCut: T, nextAt: String(NOW + 1000), cuts: '1', hint: '50', last429: String(NOW) },
      },
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
        ...argv('cutRate', { ...CUT_RATE, grantedAt: NOW - 100, bucketPrefix: k('n:') }),
      ),
    returns: ['36', T, `${NOW}:1.1111111111111;`],
    then: {
      rate: {
        hash: {
          rate: '36',
          lastCut: T,
          nextAt: T,
          cuts: '2',
          hint: '40',
          last429: String(NOW),
          lowered: T,
          lowerings: `${NOW}:1.1111111111111;`,
        },
      },
    },
    expires: { rate: true },
  },
  {
    name: "cutRate: a 429 within the last cut's window still keeps the rate below what the API accepted over the last second; the slots granted stretch by old / new rate",
    command: 'bulkorderCutRate',
    // The limit dropped: 12 accepted over the last second (second 999 wholly in the window), the rate still at 40,
    // 540 ms of slots granted ahead (21.6 requests), which at 10.8 req/s take 2000 ms; an earlier lowering kept.
    given: {
      'n:1000': '2',
      'n:999': '8',
      rate: {
        hash: {
          rate: '40',
          lastCut: String(NOW - 200),
          nextAt: String(NOW + 540),
          cuts: '1',
          hint: '44',
          lowerings: `${NOW - 9000}:2;`,
        },
      },
    },
    run: (r, k) =>
      r.bulkorderCutRate(
        k('rate'),
        k('workers'),
        ...argv('cutRate', { ...CUT_RATE, grantedAt: NOW - 100, localRate: 40, bucketPrefix: k('n:'), accepted: 2 }),
      ),
    returns: ['10.8', T, `${NOW - 9000}:2;${NOW}:3.7037037037037;`],
    then: {
      'n:1000': '2',
      'n:999': '8',
      rate: {
        hash: {
          rate: '10.8',
          lastCut: String(NOW - 200),
          nextAt: String(NOW + 2000),
          cuts: '1',
          hint: '12',
          last429: String(NOW),
          lowered: T,
          lowerings: `${NOW - 9000}:2;${NOW}:3.7037037037037;`,
        },
      },
    },
    expires: { rate: true },
  },
  {
    name: 'cutRate: a 429 to a request sent before any rate was in force (unpaced) neither cuts nor keeps the rate below the counts',
    command: 'bulkorderCutRate',
    // The counts read 5 (the other workers had not added theirs yet): a paced 429 would cut 40 to 4.5.
    given: {
      'n:1000': '5',
      rate: { hash: { rate: '40', lastCut: String(NOW - 3000), nextAt: T, cuts: '1', hint: '44' } },
    },
    run: (r, k) =>
      r.bulkorderCutRate(
        k('rate'),
        k('workers'),
        ...argv('cutRate', { ...CUT_RATE, grantedAt: NOW - 100, localRate: 40, paced: '0', bucketPrefix: k('n:') }),
      ),
    returns: ['40', '0', ''],
    then: {
      'n:1000': '5',
      rate: {
        hash: { rate: '40', lastCut: String(NOW - 3000), nextAt: T, cuts: '1', hint: '44', last429: String(NOW) },
      },
    },
    expires: { rate: true },
  },
  {
    name: "cutRate: a paced 429 within the last cut's window trims half the decrease, the slots granted stretched alike",
    command: 'bulkorderCutRate',
    given: {
      rate: { hash: { rate: '40', lastCut: String(NOW - 200), nextAt: String(NOW + 390), cuts: '1', hint: '44' } },
    },
    run: (r, k) =>
      r.bulkorderCutRate(
        k('rate'),
        k('workers'),
        ...argv('cutRate', { ...CUT_RATE, grantedAt: NOW - 100, localRate: 40 }),
      ),
    returns: ['38', T, `${NOW}:1.0526315789474;`],
    then: {
      rate: {
        hash: {
          rate: '38',
          lastCut: String(NOW - 200),
          nextAt: '1000410.5263158',
          cuts: '1',
          hint: '44',
          last429: String(NOW),
          lowered: T,
          lowerings: `${NOW}:1.0526315789474;`,
        },
      },
    },
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
    name: 'notePutBack: a put-back job is noted, kept as long as its batch',
    command: 'bulkorderNotePutBack',
    given: { 'batch:B1': { hash: { importState: 'imported' } }, 'put-back:B1': { set: ['B1.1'] } },
    run: async (r, k) => {
      await r.pexpire(k('batch:B1'), 60_000);
      return r.bulkorderNotePutBack(k('batch:B1'), k('put-back:B1'), 'B1.2');
    },
    returns: 1,
    then: { 'batch:B1': { hash: { importState: 'imported' } }, 'put-back:B1': { set: ['B1.1', 'B1.2'] } },
    expires: { 'put-back:B1': true },
  },
  {
    name: 'notePutBack: a batch gone notes nothing',
    command: 'bulkorderNotePutBack',
    run: (r, k) => r.bulkorderNotePutBack(k('batch:B1'), k('put-back:B1'), 'B1.1'),
    returns: 0,
    then: {},
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
