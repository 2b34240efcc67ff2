import type { ClientContext, Result } from 'ioredis';
import type { NamedArgv } from './scriptArgv.js';

type Arg = string | number;
/** The circuit breaker's states as its scripts return them (src/worker/circuitBreaker.ts BreakerState). */
type BreakerState = 'closed' | 'open' | 'halfOpen';
/** A ledger entry's state (src/ledger/ledgerTypes.ts LedgerState), or none. */
type EntryState = 'queued' | 'sending' | 'delivered' | 'dead' | 'held' | 'missing';
/** How a settle ended (src/lua/includes/settleOne.lua; the ledger's SettleOutcome). */
type Settled = 'ok' | 'lost' | 'already';
/** A command whose number of keys varies: the number first, then the keys, then ARGV. */
type Varying<T, Context extends ClientContext> = (numberOfKeys: number, ...keysAndArgv: Arg[]) => Result<T, Context>;

/** settle-6.lua and settleOverMemory-6.lua: the same keys and arguments, the same answer. */
type Settle<Context extends ClientContext> = (
  ledger: string,
  batch: string,
  deadRecord: string,
  deadIndex: string,
  heldRecord: string,
  heldIndex: string,
  ...argv: NamedArgv<'settle'>
) => Result<Settled, Context>;

/**
 * The typed commands defineScripts adds to a client (and its pipelines), one per file of
 * src/lua/scripts/; each script's header says what its keys and arguments are. Results are as
 * Redis returns them: Lua strings as strings, numbers as integers.
 */
declare module 'ioredis' {
  interface RedisCommander<Context extends ClientContext = { type: 'default' }> {
    // The ledger (src/ledger/).
    bulkorderReserve(
      ledger: string,
      jobHash: string,
      unqueuedIndex: string,
      unqueuedJobs: string,
      batch: string,
      ...argv: NamedArgv<'reserve'>
    ): Result<string[], Context>;
    bulkorderReserveChunk: Varying<string[], Context>;
    bulkorderConfirm(
      ledger: string,
      batch: string,
      unqueuedIndex: string,
      unqueuedJobs: string,
      batchId: string,
      orderKey: string,
    ): Result<number, Context>;
    bulkorderConfirmChunk: Varying<number, Context>;
    bulkorderDropStranded: Varying<number, Context>;
    bulkorderClaim(
      ledger: string,
      gate: string,
      ...argv: NamedArgv<'claim'>
    ): Result<[outcome: string, value: string, verdict: string], Context>;
    bulkorderClaimMany: Varying<string[], Context>;
    bulkorderSettle: Settle<Context>;
    /** settle-6.lua flagged allow-oom: the last write of a stopping worker while Redis is full. */
    bulkorderSettleOverMemory: Settle<Context>;
    bulkorderSettleMany: Varying<Settled[], Context>;
    bulkorderRelease(
      ledger: string,
      heldRecord: string,
      heldIndex: string,
      unqueuedIndex: string,
      unqueuedJobs: string,
      ...argv: NamedArgv<'release'>
    ): Result<[outcome: 'released' | EntryState, previousBatch: string, record: string], Context>;
    bulkorderUnrelease(
      ledger: string,
      heldRecord: string,
      heldIndex: string,
      unqueuedIndex: string,
      unqueuedJobs: string,
      ...argv: NamedArgv<'unrelease'>
    ): Result<number, Context>;
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
      now: number,
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
      now: number,
      windowMs: number,
      bucketPrefix: string,
    ): Result<[total: number, serverFailing: number, counts: string], Context>;
    bulkorderTickBreaker(
      state: string,
      pausedBy: string,
      ...argv: NamedArgv<'tickBreaker'>
    ): Result<[transition: string, state: BreakerState], Context>;
    // The shared request rate (src/worker/sharedRate.ts).
    bulkorderTakeRate(
      rate: string,
      now: number,
      n: number,
      ceiling: number,
      increase: number,
      slowProbe: number,
    ): Result<[at: string, spacing: string, active: string], Context>;
    bulkorderCutRate(rate: string, workers: string, ...argv: NamedArgv<'cutRate'>): Result<string, Context>;
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
    bulkorderCloseOrphaned(
      batch: string,
      owner: string,
      importingSet: string,
      batchId: string,
      now: number,
    ): Result<string, Context>;
  }
}

/** Every command declared above: test/lua/scriptHeaders.test.ts holds it equal to the files. */
export const SCRIPT_COMMANDS = [
  'bulkorderReserve',
  'bulkorderReserveChunk',
  'bulkorderConfirm',
  'bulkorderConfirmChunk',
  'bulkorderDropStranded',
  'bulkorderClaim',
  'bulkorderClaimMany',
  'bulkorderSettle',
  'bulkorderSettleOverMemory',
  'bulkorderSettleMany',
  'bulkorderRelease',
  'bulkorderUnrelease',
  'bulkorderResolve',
  'bulkorderRecordHealthy',
  'bulkorderRecordFailure',
  'bulkorderAdmit',
  'bulkorderCloseBreaker',
  'bulkorderTickBreaker',
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
  'bulkorderCloseOrphaned',
] as const;
