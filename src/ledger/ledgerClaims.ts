/**
 * An attempt's two steps in the ledger: the claim before the POST (claimMany.lua: the circuit
 * breaker's gate asked in the same script) and the settle after it (settleMany.lua; one record's
 * allow-oom twin settleOverMemory-6.lua). The Ledger class's methods of the same names call these.
 */
import { decodeRemoteId, encodeRemoteId } from '../delivery/remoteId.js';
import { argv } from '../lua/scriptArgv.js';
import type {
  ChunkClaim,
  ChunkClaimResult,
  ClaimGate,
  LedgerScope,
  SettleInput,
  SettleOutcome,
} from './ledgerTypes.js';
import { REDIS_TIME } from '../redis/redisClock.js';

/** Ledger.claimMany: the records of chunk job `claim.chunkId` for one attempt of it (`claim.token`), the gate asked once. */
export async function claimMany(
  scope: LedgerScope,
  orderKeys: readonly string[],
  claim: { token: string; chunkId: string; gate: ClaimGate | undefined },
): Promise<ChunkClaimResult> {
  const { token, chunkId, gate } = claim;
  const entries = orderKeys.map((key) => scope.keys.ledger(key));
  const reply = await scope.redis.bulkorderClaimMany(
    2 + entries.length,
    // Without a gate, any key of the slot: the script does not read it.
    gate?.key ?? entries[0] ?? scope.keys.breaker,
    scope.keys.sending,
    ...entries,
    token,
    REDIS_TIME,
    scope.retentionMs,
    scope.ambiguousPolicy,
    gate === undefined ? '0' : '1',
    chunkId,
    scope.keys.ledger(''),
    // Only when asked, and one per record (admit pairs them with the records).
    ...(gate?.customers?.length === orderKeys.length ? gate.customers : []),
  );
  if (reply[0] === 'wait') return { outcome: 'wait', retryAt: Number(reply[1]) };
  const records = orderKeys.map((_, i): ChunkClaim => {
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- claimChunk.lua replies an outcome per record
    const outcome = reply[2 + 2 * i]!;
    const value = reply[3 + 2 * i] ?? '';
    if (outcome === 'claimed') return { outcome, attempt: Number(value) };
    if (outcome === 'delivered') return { outcome, remoteId: decodeRemoteId(value) };
    if (outcome === 'stale') return { outcome, staleToken: value };
    return { outcome: outcome as 'held' | 'dead' | 'moved' | 'later' | 'vanished' };
  });
  return { outcome: 'claims', trial: reply[0] === 'trial', records };
}

/**
 * Ledger.settleOverMemory: one attempt's end through settleOverMemory-6.lua (allow-oom), the last
 * write of a worker that stops while Redis refuses writes for want of memory.
 */
export async function settleOverMemory(scope: LedgerScope, input: SettleInput): Promise<SettleOutcome> {
  const k = scope.keys;
  const [token, newState, orderKey, remoteId, httpStatus, code, message, parkedRecord, answered5xx] = settleArgs(input);
  return scope.redis.bulkorderSettleOverMemory(
    k.ledger(input.orderKey),
    k.batch(input.batchId),
    k.parked('dead', input.orderKey),
    k.parkedIndex('dead'),
    k.parked('held', input.orderKey),
    k.parkedIndex('held'),
    ...argv('settleOverMemory', {
      token,
      newState,
      now: REDIS_TIME,
      retentionMs: scope.retentionMs,
      orderKey,
      remoteId,
      httpStatus,
      code,
      message,
      parkedRecord,
      parkedRetentionMs: scope.parkedRetentionMs,
      answered5xx,
      prefix: scope.keys.prefix,
    }),
  );
}

/** Ledger.settleMany: several attempts' ends in one script; each batch counter added once. */
export async function settleMany(scope: LedgerScope, inputs: readonly SettleInput[]): Promise<SettleOutcome[]> {
  if (inputs.length === 0) return [];
  const k = scope.keys;
  // Laid out in one array (no per-record arrays to flatten): this runs once per chunk wave.
  const keysAndArgv: (string | number)[] = [k.parkedIndex('dead'), k.parkedIndex('held')];
  for (const input of inputs)
    keysAndArgv.push(
      k.ledger(input.orderKey),
      k.batch(input.batchId),
      k.parked('dead', input.orderKey),
      k.parked('held', input.orderKey),
    );
  keysAndArgv.push(REDIS_TIME, scope.retentionMs, scope.parkedRetentionMs, k.prefix);
  for (const input of inputs) keysAndArgv.push(...settleArgs(input));
  return scope.redis.bulkorderSettleMany(2 + 4 * inputs.length, ...keysAndArgv);
}

/** One settle's per-record arguments, in the order of settleMany.lua's `per record` line. */
function settleArgs(
  input: SettleInput,
): [
  token: string,
  newState: string,
  orderKey: string,
  remoteId: string,
  httpStatus: string,
  code: string,
  message: string,
  parkedRecord: string,
  answered5xx: string,
] {
  return [
    input.token,
    input.state,
    input.orderKey,
    input.remoteId === undefined ? '' : encodeRemoteId(input.remoteId),
    input.httpStatus === undefined ? '' : String(input.httpStatus),
    input.code ?? '',
    input.message ?? '',
    input.parkedRecord === undefined ? '' : JSON.stringify(input.parkedRecord),
    input.answered5xx === true ? '1' : '0',
  ];
}
