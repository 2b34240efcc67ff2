import type { Redis } from 'ioredis';

/** One key's value as a table test states it: a string, or a tagged hash, sorted set or set. */
export type KeyValue =
  string | { hash: Record<string, string> } | { zset: Record<string, number> } | { set: string[] } | { list: string[] };

/** Keys (names below the prefix) and their values. */
export type RedisState = Record<string, KeyValue>;

/** Writes a state under `prefix:` (each key replaced). */
export async function seedState(redis: Redis, prefix: string, state: RedisState): Promise<void> {
  for (const [name, value] of Object.entries(state)) {
    const key = `${prefix}:${name}`;
    await redis.del(key);
    if (typeof value === 'string') await redis.set(key, value);
    else if ('hash' in value) await redis.hset(key, value.hash);
    else if ('zset' in value)
      await redis.zadd(key, ...Object.entries(value.zset).flatMap(([member, score]) => [score, member]));
    else if ('set' in value) await redis.sadd(key, ...value.set);
    else await redis.rpush(key, ...value.list);
  }
}

/** Every key under `prefix:` and its value, as seedState writes them (sets sorted). */
export async function readState(redis: Redis, prefix: string): Promise<RedisState> {
  const state: RedisState = {};
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const name = key.slice(prefix.length + 1);
      const type = await redis.type(key);
      if (type === 'string') state[name] = (await redis.get(key)) ?? '';
      else if (type === 'hash') state[name] = { hash: await redis.hgetall(key) };
      else if (type === 'set') state[name] = { set: (await redis.smembers(key)).sort() };
      else if (type === 'list') state[name] = { list: await redis.lrange(key, 0, -1) };
      else if (type === 'zset') {
        const flat = await redis.zrange(key, '0', '-1', 'WITHSCORES');
        const zset: Record<string, number> = {};
        for (let i = 0; i < flat.length; i += 2) zset[flat[i]!] = Number(flat[i + 1]);
        state[name] = { zset };
      }
    }
  } while (cursor !== '0');
  return state;
}
