import { isRedisConnectionError } from '../redisErrors.js';

/** What recording an answer needs to outlast a Redis that refuses writes (OOM) or is away. */
export interface RecordRetry {
  /** Aborted once the worker has stopped (its grace period over): a write Redis still refuses is given up then. */
  stopped: AbortSignal;
  /** Told of each refusal (the worker logs it once, then summarised). */
  onRefused(error: Error): void;
  /** The first wait; it doubles up to `maxMs`. Defaults 200 ms and 5 s. */
  firstMs?: number;
  maxMs?: number;
  /** The writes waiting for Redis now, each until it ends: a stopping worker waits for their last resort. */
  waiting?: Set<Promise<unknown>>;
}

/**
 * Runs a write of what an attempt saw (the ledger's settle) until Redis takes it: an answer the API
 * gave is never dropped because Redis was full (`OOM command not allowed`) or away for a while.
 * Once the worker has stopped, a write Redis still refuses gets one `lastResort` (the same write
 * allowed above maxmemory) when there is one. Errors that are not Redis's refusal are thrown as they
 * are. Retrying is safe: a settle is idempotent for its token, and `delivered` wins over any state
 * another attempt recorded meanwhile (settleOne.lua).
 */
export async function untilRecorded<T>(
  write: () => Promise<T>,
  retry: RecordRetry | undefined,
  lastResort?: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (retry === undefined || !isRedisConnectionError(error)) throw error;
    retry.onRefused(error as Error);
    const waiting = retrying(write, retry, lastResort);
    retry.waiting?.add(waiting);
    try {
      return await waiting;
    } finally {
      retry.waiting?.delete(waiting);
    }
  }
}

async function retrying<T>(write: () => Promise<T>, retry: RecordRetry, lastResort?: () => Promise<T>): Promise<T> {
  let waitMs = retry.firstMs ?? 200;
  for (;;) {
    await abortableSleep(waitMs, retry.stopped);
    waitMs = Math.min(waitMs * 2, retry.maxMs ?? 5_000);
    try {
      return await (retry.stopped.aborted && lastResort !== undefined ? lastResort() : write());
    } catch (error) {
      if (retry.stopped.aborted || !isRedisConnectionError(error)) throw error;
      retry.onRefused(error as Error);
    }
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
