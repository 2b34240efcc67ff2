import { isSettled, type Batch } from '../batches/batchStore.js';
import type { Queue } from 'bullmq';
import type { Services } from '../services.js';
import type { MetricsApi, StateSnapshot } from '../metrics/bulkorderMetrics.js';
import { liveWorkers } from '../worker/workerPresence.js';
import { defined } from '../errors.js';

/** One delivery target whose shared state is read: orders, or employee accounts. */
export interface StateTarget {
  api: MetricsApi;
  services: Pick<Services<unknown>, 'redis' | 'keys' | 'batches'> & {
    queue: Pick<Queue, 'getJobCounts' | 'isPaused'>;
  };
}

/** Past this, a scrape gives up on Redis: /metrics must answer even while Redis is away. */
const STATE_TIMEOUT_MS = 2_000;

/**
 * Reads what every process shares (queue depth, breaker, workers, recent batches, parked
 * counts) from Redis. Resolves undefined when Redis does not answer in time.
 */
export async function readState(targets: readonly StateTarget[]): Promise<StateSnapshot | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>(
    (resolve) => (timer = setTimeout(() => resolve(undefined), STATE_TIMEOUT_MS).unref()),
  );
  try {
    return await Promise.race([read(targets), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function read(targets: readonly StateTarget[]): Promise<StateSnapshot> {
  const queues = await Promise.all(
    targets.map(async ({ api, services }) => {
      const [counts, paused, workers, trip] = await Promise.all([
        services.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
        services.queue.isPaused(),
        // Heartbeats, as `status` counts them: BullMQ's getWorkers needs CLIENT LIST, which a least-privilege user lacks.
        liveWorkers(services.redis, services.keys).then((workers) => workers.length),
        services.redis.hget(services.keys.breaker, 'state'),
      ]);
      return {
        api,
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        paused,
        workers,
        // Half-open counts as open: delivery is still held back to a few trial calls.
        breakerOpen: trip === 'open' || trip === 'halfOpen',
      };
    }),
  );
  const orders = defined(targets[0], 'the first target').services;
  const [batches, deadLetters, held] = await Promise.all([
    orders.batches.list(200),
    orders.redis.zcard(orders.keys.parkedIndex('dead')),
    orders.redis.zcard(orders.keys.parkedIndex('held')),
  ]);
  const batchesByState: Record<string, number> = { importing: 0, delivering: 0, settled: 0, failed: 0 };
  for (const b of batches) {
    const state = batchState(b);
    batchesByState[state] = (batchesByState[state] ?? 0) + 1;
  }
  return { queues, batchesByState, deadLetters, held };
}

/** A batch's state for the counts: its import's state while that is not done, then settled or delivering. */
function batchState(batch: Batch): 'failed' | 'importing' | 'settled' | 'delivering' {
  if (batch.importState === 'failed' || batch.importState === 'importing') return batch.importState;
  return isSettled(batch) ? 'settled' : 'delivering';
}
