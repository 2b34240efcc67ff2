import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import { defineScripts } from '../lua/defineScripts.js';

/**
 * Who works on a claimed file. The rename into processing/ decides who took a file from the
 * inbox; this lock decides who works on a file in processing/, so a watcher that starts while
 * another is busy with a file leaves it alone, and a file whose watcher died is resumed once its
 * lock lapses. Held with SET NX PX, renewed while working, released by compare-and-delete.
 */
export class ClaimLock {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    /** Unique per watcher process. */
    readonly owner: string,
    readonly ttlMs: number,
  ) {
    defineScripts(redis);
  }

  async acquire(claim: string): Promise<boolean> {
    return (await this.redis.set(this.keys.watchLock(claim), this.owner, 'PX', this.ttlMs, 'NX')) === 'OK';
  }

  /** False when the lock was lost (expired and taken by another watcher): stop working on the file. */
  async renew(claim: string): Promise<boolean> {
    return (await this.redis.bulkorderExtendIfOwner(this.keys.watchLock(claim), this.owner, this.ttlMs)) === 1;
  }

  async release(claim: string): Promise<void> {
    await this.redis.bulkorderDeleteIfOwner(this.keys.watchLock(claim), this.owner);
  }
}
