/**
 * Recognises a lost or refused Redis connection in an error thrown by ioredis, so the CLI can
 * answer with exit 5 and a clear message instead of an internal error. ioredis gives most of
 * these no code, so its messages are matched here, in this one place.
 * (Kept free of imports: src/cli.ts loads it on every run.)
 */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const CONNECTION_MESSAGES =
  /Stream isn't writeable|Connection is closed|Reached the max retries per request limit|Connection timed out|Command aborted due to connection close/;
/**
 * Replies of a Redis that is there but cannot serve yet: restarting from its AOF (LOADING), a
 * replica or cluster mid-failover (READONLY, MASTERDOWN, CLUSTERDOWN, TRYAGAIN).
 */
const UNAVAILABLE_REPLIES = /^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/;

/** A Redis at its `maxmemory` under `noeviction` refuses every write that may grow it with this reply. */
const OUT_OF_MEMORY_REPLY = /^OOM\b/;

/**
 * Redis answers but refuses writes for want of memory (`OOM command not allowed when used memory >
 * 'maxmemory'`): as unavailable as a lost connection for a command (exit 5), and a worker waits it out.
 */
export function isRedisOutOfMemory(error: unknown): boolean {
  return outOfMemoryReply(error) !== undefined;
}

/** The OOM reply behind an error (itself, or one a MULTI was discarded for: EXECABORT), for messages. */
export function outOfMemoryReply(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  if (OUT_OF_MEMORY_REPLY.test(error.message)) return error.message;
  // A MULTI whose queued commands were refused ends in EXECABORT; ioredis keeps their replies beside it.
  const previous = (error as { previousErrors?: unknown }).previousErrors;
  if (!/^EXECABORT\b/.test(error.message) || !Array.isArray(previous)) return undefined;
  return previous.map(outOfMemoryReply).find((reply) => reply !== undefined);
}

/** A lost or refused connection, a Redis that cannot serve yet, or one out of memory (isRedisOutOfMemory). */
export function isRedisConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (isRedisOutOfMemory(error)) return true;
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== undefined && CONNECTION_CODES.has(code)) return true;
  // ioredis aborts the commands of a pipeline or script that was in flight when the connection closed.
  if (error.name === 'MaxRetriesPerRequestError' || error.name === 'AbortError') return true;
  return CONNECTION_MESSAGES.test(error.message) || UNAVAILABLE_REPLIES.test(error.message);
}
