/**
 * An attempt's two steps in the ledger: the claim before the POST (claim-2.lua, claimMany.lua: the
 * circuit breaker's gate asked in the same script) and the settle after it (settle-6.lua,
 * settleMany.lua). The Ledger class's methods of the same names call these.
 */
import { decodeRemoteId, encodeRemoteId } from '../delivery/remoteId.js';
import { argv } from '../lua/scriptArgv.js';
import type {
  ChunkClaim,
  ChunkClaimResult,
  ClaimGate,
  ClaimResult,
  LedgerScope,
  SettleInput,
  SettleOutcome,
} from './ledgerTypes.js';

/** Ledger.claim: marks an order `sending` for this attempt unless its state forbids it; the gate asked first when given. */
export async function claim(
  scope: LedgerScope,
  orderKey: string,
  token: string,
  gate: ClaimGate | undefined,
  chunkId: string,
): Promise<ClaimResult> {
  const entry = scope.keys.ledger(orderKey);
  const [outcome, value, verdict] = await scope.redis.bulkorderClaim(
    entry,
    // Without a gate, the entry again: the script never reads it, and the slot stays the entry's.
    gate?.key ?? entry,
    ...argv('claim', {
      token,
      now: Date.now(),
      retentionMs: scope.retentionMs,
      ambiguousPolicy: scope.ambiguousPolicy,
      askGate: gate === undefined ? '0' : '1',
      jobId: chunkId,
      customer: gate?.customers?.[0] ?? '',
    }),
  );
  const trial = verdict === 'trial' ? { trial: true as const } : {};
  switch (outcome) {
    case 'wait':
      return { outcome, retryAt: Number(value) };
    case 'claimed':
      return { outcome, attempt: Number(value), ...trial };
    case 'delivered':
      return { outcome, remoteId: decodeRemoteId(value), ...trial };
    case 'held':
    case 'moved':
      return { outcome, ...trial };
    default:
      return { outcome: 'stale', staleToken: value, ...trial };
  }
}

/** Ledger.claimMany: the records of chunk job `chunkId` for one attempt of it, the gate asked once. */
export async function claimMany(
  scope: LedgerScope,
  orderKeys: readonly string[],
  token: string,
  chunkId: string,
  gate: ClaimGate | undefined,
): Promise<ChunkClaimResult> {
  const entries = orderKeys.map((key) => scope.keys.ledger(key));
  const reply = await scope.redis.bulkorderClaimMany(
    1 + entries.length,
    // Without a gate, any key of the slot: the script does not read it.
    gate?.key ?? entries[0] ?? scope.keys.breaker,
    ...entries,
    token,
    Date.now(),
    scope.retentionMs,
    scope.ambiguousPolicy,
    gate === undefined ? '0' : '1',
    chunkId,
    // Only when asked, and one per record (admit pairs them with the records).
    ...(gate?.customers?.length === orderKeys.length ? gate.customers : []),
  );
  if (reply[0] === 'wait') return { outcome: 'wait', retryAt: Number(reply[1]) };
  const records = orderKeys.map((_, i): ChunkClaim => {
    const outcome = reply[2 + 2 * i]!;
    const value = reply[3 + 2 * i] ?? '';
    if (outcome === 'claimed') return { outcome, attempt: Number(value) };
    if (outcome === 'delivered') return { outcome, remoteId: decodeRemoteId(value) };
    if (outcome === 'stale') return { outcome, staleToken: value };
    return { outcome: outcome as 'held' | 'dead' | 'moved' | 'later' };
  });
  return { outcome: 'claims', trial: reply[0] === 'trial', records };
}

/**
 * Ledger.settle: records how an attempt ended. `overMemory`: through settleOverMemory-6.lua (allow-oom), the
 * last write of a worker that stops while Redis refuses writes for want of memory.
 */
export async function settle(scope: LedgerScope, input: SettleInput, overMemory = false): Promise<SettleOutcome> {
  const k = scope.keys;
  const [token, newState, orderKey, remoteId, httpStatus, code, message, parkedRecord, answered5xx] = settleArgs(input);
  const run = overMemory ? scope.redis.bulkorderSettleOverMemory : scope.redis.bulkorderSettle;
  return run.call(
    scope.redis,
    k.ledger(input.orderKey),
    k.batch(input.batchId),
    k.parked('dead', input.orderKey),
    k.parkedIndex('dead'),
    k.parked('held', input.orderKey),
    k.parkedIndex('held'),
    ...argv('settle', {
      token,
      newState,
      now: Date.now(),
      retentionMs: scope.retentionMs,
      orderKey,
      remoteId,
      httpStatus,
      code,
      message,
      parkedRecord,
      parkedRetentionMs: scope.parkedRetentionMs,
      answered5xx,
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
  keysAndArgv.push(Date.now(), scope.retentionMs, scope.parkedRetentionMs);
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
