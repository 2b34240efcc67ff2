import type { ClientContext, Result } from 'ioredis';
import type { NamedArgv } from './scriptArgv.js';

type Arg = string | number;
/** The circuit breaker's states as its scripts return them (src/worker/circuitBreaker.ts BreakerState). */
type BreakerState = 'closed' | 'open' | 'halfOpen';
/** A ledger entry's state (src/ledger/ledgerTypes.ts LedgerState), or none. */
type EntryState = 'queued' | 'sending' | 'delivered' | 'dead' | 'held' | 'missing';
/** How a settle ended (src/lua/includes/settleOne.lua; the ledger's SettleOutcome). */
type Settled = 'ok' | 'lost' | 'already';
/** The KEYS of release-5 and of unrelease-5, which undoes it (src/ledger/ledgerReview.ts builds them once). */
export type ReleaseKeys = [
  ledger: string,
  heldRecord: string,
  heldIndex: string,
  unqueuedIndex: string,
  unqueuedJobs: string,
];
/** A command whose number of keys varies: the number first, then the keys, then ARGV. */
type Varying<T, Context extends ClientContext> = (numberOfKeys: number, ...keysAndArgv: Arg[]) => Result<T, Context>;

/**
 * The typed commands defineScripts adds to a client (and its pipelines), one per file of
 * src/lua/scripts/; each script's header says what its keys and arguments are. Results are as
 * Redis returns them: Lua strings as strings, numbers as integers.
 */
declare module 'ioredis' {
  interface RedisCommander<Context extends ClientContext = { type: 'default' }> {
    // The ledger (src/ledger/).
    bulkorderReserveChunk: Varying<string[], Context>;
    bulkorderConfirmChunk: Varying<number, Context>;
    bulkorderDropStranded: Varying<number, Context>;
    bulkorderClaimMany: Varying<string[], Context>;
    /** One record's settle, flagged allow-oom: the last write of a stopping worker while Redis is full. */
    bulkorderSettleOverMemory(
      ledger: string,
      batch: string,
      deadRecord: string,
      deadIndex: string,
      heldRecord: string,
      heldIndex: string,
      ...argv: NamedArgv<'settleOverMemory'>
    ): Result<Settled, Context>;
    bulkorderSettleMany: Varying<Settled[], Context>;
    bulkorderRelease(
      ...keysAndArgv: [...ReleaseKeys, ...NamedArgv<'release'>]
    ): Result<[outcome: 'released' | EntryState, previousBatch: string, record: string], Context>;
    bulkorderUnrelease(...keysAndArgv: [...ReleaseKeys, ...NamedArgv<'unrelease'>]): Result<number, Context>;
    /** `purgeParked.lua`: the index, then one record key per record; now, prefix, kind, who, note, then the order keys. */
    bulkorderPurgeParked: Varying<number, Context>;
    bulkorderResolve(
      ledger: string,
      batch: string,
      heldRecord: string,
      heldIndex: string,
      ...argv: NamedArgv<'resolve'>
    ): Result<'resolved' | 'moved' | EntryState, Context>;
    // The circuit breaker (src/worker/circuitBreaker.ts).
    bulkorderRecordHealthy(
      state: string,
      bucketPrefix: string,
      /** REDIS_TIME (src/redis/redisClock.ts), or ms in the script tests. */
      now: string | number,
      windowMs: number,
      count: number,
    ): Result<number, Context>;
    bulkorderRecordFailure(
      state: string,
      failures: string,
      orders: string,
      burst: string,
      customers: string,
      exempt: string,
      batches: string,
      ...argv: NamedArgv<'recordFailure'>
    ): Result<[transition: string, state: BreakerState, ...opened: (string | number)[]], Context>;
    bulkorderAdmit(state: string): Result<[verdict: string, nextProbeAt: string], Context>;
    bulkorderCloseBreaker(
      state: string,
      burst: string,
      exempt: string,
      answers: string,
      refused: string,
      ...argv: NamedArgv<'closeBreaker'>
    ): Result<string[], Context>;
    bulkorderReadWindow(
      failures: string,
      /** REDIS_TIME (src/redis/redisClock.ts), or ms in the script tests. */
      now: string | number,
      windowMs: number,
      bucketPrefix: string,
    ): Result<[total: number, serverFailing: number, counts: string], Context>;
    bulkorderTickBreaker(
      state: string,
      pausedBy: string,
      ...argv: NamedArgv<'tickBreaker'>
    ): Result<[transition: string, state: BreakerState], Context>;
    // One batch's circuit (src/worker/batchCanary.ts).
    bulkorderBatchGate(
      circuit: string,
      granted: string,
      refused: string,
      batch: string,
      canaryOrders: number,
      ttlMs: number,
      probeTimeoutMs: number,
      canaryWaitMs: number,
      ...orderKeys: string[]
    ): Result<[state: string, waitMs: number, refusedCount: number, ...decisions: string[]], Context>;
    bulkorderBatchOutcome(
      circuit: string,
      granted: string,
      refused: string,
      batch: string,
      heldIndex: string,
      ...argv: NamedArgv<'batchOutcome'>
    ): Result<[transition: 'none' | 'held' | 'passed' | 'resumed', decision: 'count' | 'defer'], Context>;
    // The shared request rate (src/worker/sharedRate.ts).
    bulkorderTakeRate(
      rate: string,
      /** REDIS_TIME (src/redis/redisClock.ts), or ms in the script tests. */
      now: string | number,
      n: number,
      ceiling: number,
      increase: number,
      slowProbe: number,
      probe: number,
      quietMs: number,
      horizonMs: number,
      waves: string,
    ): Result<
      [at: string, spacing: string, state: string, lowered: string, lowerings: string, waves?: string],
      Context
    >;
    bulkorderCutRate(
      rate: string,
      workers: string,
      ...argv: NamedArgv<'cutRate'>
    ): Result<[rate: string, lowered: string, lowerings: string], Context>;
    // Parked records, locks, the shared token, imports.
    bulkorderParkedCauses(
      index: string,
      recordKeyPrefix: string,
      start: number,
      stop: number,
    ): Result<string[], Context>;
    bulkorderPruneParked(index: string, cutoff: number, recordKeyPrefix: string): Result<number, Context>;
    bulkorderDropGhosts(index: string, recordKeyPrefix: string, ...members: string[]): Result<number, Context>;
    bulkorderExtendIfOwner(lock: string, owner: string, ttlMs: number): Result<number, Context>;
    bulkorderDeleteIfOwner(lock: string, owner: string): Result<number, Context>;
    bulkorderInvalidateToken(token: string, tokenId: string): Result<number, Context>;
    bulkorderHeartbeat(batch: string, owner: string, ttlMs: number): Result<number, Context>;
    /** `notePutBack-2.lua`: 1 when noted, 0 when the batch is gone. */
    bulkorderNotePutBack(batch: string, putBack: string, jobId: string): Result<number, Context>;
    bulkorderCloseOrphaned(
      batch: string,
      owner: string,
      importingSet: string,
      batchId: string,
      /** REDIS_TIME (src/redis/redisClock.ts), or ms in the script tests. */
      now: string | number,
    ): Result<string, Context>;
  }
}

/** Every command declared above: test/lua/scriptHeaders.test.ts holds it equal to the files. */
export const SCRIPT_COMMANDS = [
  'bulkorderReserveChunk',
  'bulkorderConfirmChunk',
  'bulkorderDropStranded',
  'bulkorderClaimMany',
  'bulkorderSettleOverMemory',
  'bulkorderSettleMany',
  'bulkorderRelease',
  'bulkorderUnrelease',
  'bulkorderResolve',
  'bulkorderPurgeParked',
  'bulkorderRecordHealthy',
  'bulkorderRecordFailure',
  'bulkorderAdmit',
  'bulkorderCloseBreaker',
  'bulkorderTickBreaker',
  'bulkorderBatchGate',
  'bulkorderBatchOutcome',
  'bulkorderReadWindow',
  'bulkorderTakeRate',
  'bulkorderCutRate',
  'bulkorderParkedCauses',
  'bulkorderPruneParked',
  'bulkorderDropGhosts',
  'bulkorderExtendIfOwner',
  'bulkorderDeleteIfOwner',
  'bulkorderInvalidateToken',
  'bulkorderHeartbeat',
  'bulkorderNotePutBack',
  'bulkorderCloseOrphaned',
] as const;
