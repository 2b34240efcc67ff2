import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import { flatPairs } from '../redis/flatPairs.js';

/**
 * A batch's circuit as a person sees it (`bulkorder batch show`, `status`, the dashboard). The
 * workers move it (src/worker/batchCanary.ts); a person cancels or releases it here.
 * `canary`: its first orders are being judged; `flowing`: it goes at full speed; `held`: more than
 * the canary's refused share was refused with one cause, nothing more is sent but a probe;
 * `released`: a person sends the rest regardless; `cancelled`: a person ended its unsent orders.
 * `none`: the batch has sent nothing yet.
 */
export type BatchCircuitState = 'none' | 'canary' | 'flowing' | 'held' | 'released' | 'cancelled';

export interface BatchCircuitView {
  batchId: string;
  state: BatchCircuitState;
  /** The refusal that held it (`HTTP 422 UNKNOWN_PRODUCT`), with the API's status, code and message. */
  cause?: string;
  status?: number;
  code?: string;
  message?: string;
  /** Canary orders answered, and how many the API accepted. */
  canaryAnswered: number;
  canaryAccepted: number;
  /** Orders refused while the batch was judged or held, waiting with it (not dead-lettered). */
  refusedCount: number;
  /** A few of them: order key and the API's message. */
  samples: { orderKey: string; message: string }[];
  heldAt?: number;
  nextProbeAt?: number;
  probes?: number;
  /** A person's cancel or release: who, why, when (ms). */
  action?: { kind: 'cancelled' | 'released'; by: string; why: string; at: number };
}

const SAMPLES = 3;
/** How many transitions the events log keeps (notifications read the recent ones). */
const EVENTS_KEPT = 1000;

/** One transition of a batch's circuit, as the events log keeps it. */
export interface BatchCircuitEvent {
  type: 'held' | 'resumed' | 'cancelled' | 'released';
  batchId: string;
  /** When (ms, Redis's clock). */
  at: number;
  circuit: BatchCircuitView;
}

/** Appends a transition to the events log (the worker or person that made it, once). */
export async function logBatchCircuitEvent(
  redis: RedisClient,
  keys: Keyspace,
  event: Omit<BatchCircuitEvent, 'at'>,
): Promise<BatchCircuitEvent> {
  const at = await redisNow(redis);
  const full = { ...event, at };
  await redis
    .multi()
    .zadd(keys.batchCircuitEvents, at, JSON.stringify(full))
    .zremrangebyrank(keys.batchCircuitEvents, 0, -EVENTS_KEPT - 1)
    .exec();
  return full;
}

/** The transitions logged at or after `since` (ms), oldest first. */
export async function readBatchCircuitEvents(
  redis: RedisClient,
  keys: Keyspace,
  since: number,
): Promise<BatchCircuitEvent[]> {
  const raw = await redis.zrangebyscore(keys.batchCircuitEvents, since, '+inf');
  return raw.map((text) => JSON.parse(text) as BatchCircuitEvent);
}

/** Redis's clock (ms): every time a batch circuit records is Redis's, as its scripts' are. */
async function redisNow(redis: RedisClient): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Reads one batch's circuit. */
export async function readBatchCircuit(redis: RedisClient, keys: Keyspace, batchId: string): Promise<BatchCircuitView> {
  const [raw, refusedCount, sampled] = await Promise.all([
    redis.hgetall(keys.batchCircuit(batchId)),
    redis.hlen(keys.batchCanaryRefused(batchId)),
    redis.hscan(keys.batchCanaryRefused(batchId), '0', 'COUNT', SAMPLES),
  ]);
  const pairs = sampled[1];
  const samples: BatchCircuitView['samples'] = [];
  for (const [orderKey, message] of flatPairs(pairs)) {
    if (samples.length >= SAMPLES) break;
    samples.push({ orderKey, message: messageOf(message) });
  }
  const num = (field: string): number | undefined => (raw[field] === undefined ? undefined : Number(raw[field]));
  const actionKind = raw.actionKind as 'cancelled' | 'released' | undefined;
  const [heldAt, nextProbeAt, probes] = [num('heldAt'), num('nextProbeAt'), num('probes')];
  return {
    batchId,
    state: (raw.state ?? 'none') as BatchCircuitState,
    ...(raw.signature === undefined || raw.signature === '' ? {} : { cause: raw.signature }),
    ...(raw.status === undefined || raw.status === '' ? {} : { status: Number(raw.status) }),
    ...(raw.code === undefined ? {} : { code: raw.code }),
    ...(raw.message === undefined ? {} : { message: raw.message }),
    canaryAnswered: num('done') ?? 0,
    canaryAccepted: num('accepted') ?? 0,
    refusedCount,
    samples,
    ...(heldAt === undefined ? {} : { heldAt }),
    ...(raw.state === 'held' && nextProbeAt !== undefined ? { nextProbeAt } : {}),
    ...(probes === undefined ? {} : { probes }),
    ...(actionKind === undefined
      ? {}
      : { action: { kind: actionKind, by: raw.actionBy ?? '', why: raw.actionWhy ?? '', at: num('actionAt') ?? 0 } }),
  };
}

/**
 * The batches held now, oldest first, each with its cause: what a person must look at (`status`,
 * the dashboard banner, and the list of items needing a person may register this).
 */
export async function listHeldBatches(redis: RedisClient, keys: Keyspace): Promise<BatchCircuitView[]> {
  const ids = await redis.zrange(keys.heldBatches, '0', '99');
  const views = await Promise.all(ids.map((id) => readBatchCircuit(redis, keys, id)));
  return views.filter((view) => view.state === 'held');
}

/** Who acts on a batch and why, recorded on its circuit. */
export interface BatchAction {
  by: string;
  why: string;
}

/**
 * A person ends every unsent order of the batch as cancelled: the workers settle each when its job
 * comes (dead-lettered with BATCH_CANCELLED, who and why), none is sent afterwards. Returns the
 * circuit as it was before.
 */
export async function cancelBatch(
  redis: RedisClient,
  keys: Keyspace,
  batchId: string,
  action: BatchAction,
): Promise<BatchCircuitView> {
  return actOn(redis, keys, batchId, { kind: 'cancelled', action });
}

/** A person sends the rest of the batch regardless of its canary; the orders it refused are sent again. */
export async function releaseBatch(
  redis: RedisClient,
  keys: Keyspace,
  batchId: string,
  action: BatchAction,
): Promise<BatchCircuitView> {
  return actOn(redis, keys, batchId, { kind: 'released', action });
}

async function actOn(
  redis: RedisClient,
  keys: Keyspace,
  batchId: string,
  act: { kind: 'cancelled' | 'released'; action: BatchAction },
): Promise<BatchCircuitView> {
  const { kind, action } = act;
  const before = await readBatchCircuit(redis, keys, batchId);
  const at = await redisNow(redis);
  const multi = redis
    .multi()
    .hset(keys.batchCircuit(batchId), {
      state: kind,
      actionKind: kind,
      actionBy: action.by.slice(0, 200),
      actionWhy: action.why.slice(0, 500),
      actionAt: at,
    })
    .hdel(keys.batchCircuit(batchId), 'probeKey', 'probeUntil')
    .pexpire(keys.batchCircuit(batchId), 14 * 24 * 3600_000)
    .zrem(keys.heldBatches, batchId);
  // Released: the orders the canary refused are sent again. Cancelled: they end as cancelled too.
  if (kind === 'released') multi.del(keys.batchCanaryRefused(batchId));
  await multi.exec();
  await logBatchCircuitEvent(redis, keys, {
    type: kind,
    batchId,
    circuit: await readBatchCircuit(redis, keys, batchId),
  });
  return before;
}

function messageOf(answer: string): string {
  try {
    const parsed = JSON.parse(answer) as { status?: number; code?: string; message?: string };
    return `HTTP ${parsed.status ?? '?'} ${parsed.code ?? ''}: ${parsed.message ?? ''}`.slice(0, 300);
  } catch {
    return answer.slice(0, 300);
  }
}
