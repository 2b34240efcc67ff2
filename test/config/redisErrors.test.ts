import { afterAll, describe, expect, it } from 'vitest';
import { isRedisConnectionError, isRedisOutOfMemory, outOfMemoryReply } from '../../src/redisErrors.js';
import { testRedis } from '../helpers/redis.js';

const redis = testRedis();
afterAll(() => redis.disconnect());

/** A real ReplyError with the given reply, as a Redis that answers it would give. */
async function replyError(reply: string): Promise<unknown> {
  return redis.eval(`return redis.error_reply(ARGV[1])`, 0, reply).then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('which errors mean "Redis is not there" (exit 5, run again) rather than an internal error', () => {
  it('a Redis restarting from its AOF or failing over is unavailable, not a bug', async () => {
    for (const reply of [
      'LOADING Redis is loading the dataset in memory',
      "READONLY You can't write against a read only replica.",
      'MASTERDOWN Link with MASTER is down',
      'CLUSTERDOWN The cluster is down',
      'TRYAGAIN Multiple keys request during rehashing of slot',
    ]) {
      expect(isRedisConnectionError(await replyError(reply)), reply).toBe(true);
    }
  });

  it('a Redis out of memory (noeviction at maxmemory) refuses writes: unavailable, also inside a MULTI', async () => {
    const oom = "OOM command not allowed when used memory > 'maxmemory'.";
    expect(isRedisConnectionError(await replyError(oom))).toBe(true);
    const execAbort = Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [await replyError(oom)],
    });
    expect(isRedisOutOfMemory(execAbort)).toBe(true);
    expect(outOfMemoryReply(execAbort)).toBe(oom);
    expect(isRedisOutOfMemory(new Error('EXECABORT Transaction discarded because of previous errors.'))).toBe(false);
  });

  it('commands ioredis aborted because the connection closed under them (a Redis killed mid-import)', () => {
    // ioredis's own AbortError (from redis-errors), as abortIncompletePipelines throws it.
    const aborted = Object.assign(new Error('Command aborted due to connection close'), { name: 'AbortError' });
    expect(isRedisConnectionError(aborted)).toBe(true);
  });

  it('a script error or a wrong command stays an internal error', async () => {
    expect(isRedisConnectionError(await replyError('ERR something the script did not expect'))).toBe(false);
    expect(
      isRedisConnectionError(await replyError('WRONGTYPE Operation against a key holding the wrong kind of value')),
    ).toBe(false);
    expect(isRedisConnectionError(new TypeError('x is undefined'))).toBe(false);
  });
});
