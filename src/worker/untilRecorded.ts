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
}

/**
 * Runs a write of what an attempt saw (the ledger's settle) until Redis takes it: an answer the API
 * gave is never dropped because Redis was full (`OOM command not allowed`) or away for a while.
 * Errors that are not Redis's refusal, and a refusal after `stopped`, are thrown as they are.
 * Retrying is safe: a settle is idempotent for its token, and `delivered` wins over any state
 * another attempt recorded meanwhile (settleOne.lua).
 */
export async function untilRecorded<T>(write: () => Promise<T>, retry: RecordRetry | undefined): Promise<T> {
  let waitMs = retry?.firstMs ?? 200;
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (retry === undefined || retry.stopped.aborted || !isRedisConnectionError(error)) throw error;
      retry.onRefused(error as Error);
      await abortableSleep(waitMs, retry.stopped);
      waitMs = Math.min(waitMs * 2, retry.maxMs ?? 5_000);
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
