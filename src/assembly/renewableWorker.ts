import type { Worker } from 'bullmq';
import type { RedisClient } from '../redis.js';
import { IDLE_CLOSE_MS } from './idleClose.js';

export interface RenewableWorkerOptions<D, R> {
  /** A new connection for one BullMQ worker (BullMQ duplicates it for its blocking wait). */
  connect(): RedisClient;
  /** A BullMQ worker on `connection`; it starts fetching only when `autorun`. */
  create(connection: RedisClient, autorun: boolean): Worker<D, R>;
  /** Hooks a new worker up (its listeners), the first and each replacement alike. */
  wire(worker: Worker<D, R>): void;
}

/**
 * The BullMQ worker of a delivery worker, which the wedge guard (src/worker/wedgeGuard.ts) may
 * replace: BullMQ's maintainers' advice for a worker whose blocking wait never comes back (issue
 * 3185: close it, make a new one). Each BullMQ worker has a connection of its own, so a retired
 * one that wakes later can take no job: its connection is closed.
 */
export class RenewableWorker<D, R> {
  #worker: Worker<D, R>;
  #connection: RedisClient;
  #paused = false;

  constructor(private readonly options: RenewableWorkerOptions<D, R>) {
    this.#connection = options.connect();
    this.#worker = options.create(this.#connection, true);
    options.wire(this.#worker);
  }

  /** The BullMQ worker now. */
  get worker(): Worker<D, R> {
    return this.#worker;
  }

  /** Its connection (closed by the caller once the worker is). */
  get connection(): RedisClient {
    return this.#connection;
  }

  /** Takes no new jobs (jobs in flight finish); a replacement starts paused too. */
  pause(): Promise<void> {
    this.#paused = true;
    return this.#worker.pause(true);
  }

  resume(): void {
    this.#paused = false;
    void this.#worker.resume();
  }

  /**
   * Retires the BullMQ worker and starts a new one on a new connection. Called with no job
   * running: the old one is closed by force (nothing to wait for) and its connections shut; a
   * job whose fetch its connection's end cut short stays active and comes back as stalled.
   */
  async renew(): Promise<void> {
    const old = this.#worker;
    const oldConnection = this.#connection;
    this.#connection = this.options.connect();
    this.#worker = this.options.create(this.#connection, !this.#paused);
    this.options.wire(this.#worker);
    const next = this.#worker;
    await retire(old, oldConnection);
    // The new one gets its connections before the guard looks again (bounded: Redis may be away).
    await Promise.race([
      next.waitUntilReady().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, IDLE_CLOSE_MS).unref()),
    ]);
  }
}

/** Closes a wedged BullMQ worker without waiting on its wait, and keeps its connections shut. */
async function retire<D, R>(worker: Worker<D, R>, connection: RedisClient): Promise<void> {
  const blocking = await Promise.race([
    worker.getBackend().blockingClient,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), IDLE_CLOSE_MS).unref()),
  ]).catch(() => undefined);
  const closed = worker.close(true).catch(() => undefined);
  connection.disconnect();
  if (blocking !== undefined) {
    // BullMQ's own reset of the deaf wait would reconnect it once the dead socket closes: not for a retired worker.
    blocking.on('connect', () => blocking.disconnect());
    blocking.disconnect();
  }
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, IDLE_CLOSE_MS).unref())]);
}
