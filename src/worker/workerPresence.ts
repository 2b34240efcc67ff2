import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import { redisTime } from '../redis/redisClock.js';
import { dropStale } from '../redis/dropStale.js';

/** One running worker process, as `status` and `import --wait` show it. */
export interface WorkerFacts {
  id: string;
  host: string;
  pid: number;
  queue: string;
  concurrency: number;
  /** Started at (ms). */
  since: number;
}

/** Heartbeats more than this old mean the worker is gone (it beats every HEARTBEAT_MS). */
export const WORKER_STALE_MS = 15_000;
const HEARTBEAT_MS = 5_000;

/** Registers this worker and keeps its heartbeat until `stop()`; heartbeat errors (Redis down) are left to the worker's own logs. */
export function startPresence(
  redis: RedisClient,
  keys: Keyspace,
  facts: Omit<WorkerFacts, 'id' | 'host' | 'pid' | 'since'>,
): { stop(): Promise<void> } {
  const self: WorkerFacts = {
    id: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    host: hostname(),
    pid: process.pid,
    since: Date.now(),
    ...facts,
  };
  // Scored by Redis's clock: a peer whose host clock is minutes behind must not look dead.
  const beat = () =>
    redisTime(redis)
      .then((now) =>
        redis.multi().zadd(keys.workers, now, self.id).hset(keys.workerInfo, self.id, JSON.stringify(self)).exec(),
      )
      .catch(() => undefined);
  void beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await redis
        .multi()
        .zrem(keys.workers, self.id)
        .hdel(keys.workerInfo, self.id)
        .exec()
        .catch(() => undefined);
    },
  };
}

/** Workers whose heartbeat is fresh; forgets the stale ones. */
export async function liveWorkers(redis: RedisClient, keys: Keyspace, at?: number): Promise<WorkerFacts[]> {
  const now = at ?? (await redisTime(redis));
  await dropStale(redis, { index: keys.workers, details: keys.workerInfo }, now - WORKER_STALE_MS);
  const ids = await redis.zrangebyscore(keys.workers, now - WORKER_STALE_MS, '+inf');
  if (ids.length === 0) return [];
  const info = await redis.hmget(keys.workerInfo, ...ids);
  return info.flatMap((json) => (json === null ? [] : [JSON.parse(json) as WorkerFacts]));
}
