import type { RedisClient } from '../redis.js';
import { loadScripts, type LoadedScript } from './loadScripts.js';
import './scriptCommands.js';

// Read once per process; a client is given the commands once (ioredis keeps them per client).
let scripts: LoadedScript[] | undefined;
const defined = new WeakSet<RedisClient>();

/**
 * Gives a client (a Redis or a Cluster) every script of src/lua/scripts/ as a typed command
 * (src/lua/scriptCommands.ts), once per client; its pipelines made after have them too. ioredis
 * runs a defined command by EVALSHA and sends the script only when Redis answers NOSCRIPT. Every
 * store calls it on the client it is given; a second call costs nothing. Returns the client.
 */
export function defineScripts<C extends RedisClient>(redis: C): C {
  if (defined.has(redis)) return redis;
  scripts ??= loadScripts();
  for (const script of scripts) {
    redis.defineCommand(
      script.command,
      script.numberOfKeys === undefined ? { lua: script.lua } : { numberOfKeys: script.numberOfKeys, lua: script.lua },
    );
  }
  defined.add(redis);
  return redis;
}
