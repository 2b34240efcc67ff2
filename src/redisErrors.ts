/**
 * Recognises a lost or refused Redis connection in an error thrown by ioredis, so the CLI can
 * answer with exit 5 and a clear message instead of an internal error. ioredis gives most of
 * these no code, so its messages are matched here, in this one place. A Redis Cluster mid-failover
 * adds its own: too many redirections (a command that kept meeting a dead master), a cluster not
 * ready, a slot map that could not be read.
 * (Kept free of imports: src/cli.ts loads it on every run.)
 */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const CONNECTION_MESSAGES =
  /Stream isn't writeable|Connection is closed|Reached the max retries per request limit|Connection timed out|Command aborted due to connection close|Too many Cluster redirections|Cluster isn't ready|Failed to refresh slots cache|None of startup nodes is available/;
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
  return replyBehind(error, OUT_OF_MEMORY_REPLY);
}

/** The reply matching `pattern` behind an error: itself, or one a MULTI was discarded for (EXECABORT). */
function replyBehind(error: unknown, pattern: RegExp): string | undefined {
  if (!(error instanceof Error)) return undefined;
  if (pattern.test(error.message)) return error.message;
  // A MULTI whose queued commands were refused ends in EXECABORT; ioredis keeps their replies beside it.
  const previous = (error as { previousErrors?: unknown }).previousErrors;
  if (!/^EXECABORT\b/.test(error.message) || !Array.isArray(previous)) return undefined;
  return previous.map((e: unknown) => replyBehind(e, pattern)).find((reply) => reply !== undefined);
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

/**
 * Redis refused a command to this user: an ACL without it (`NOPERM`), or a command renamed away
 * (`rename-command CONFIG ""`: unknown command). Managed Redis and least-privilege users do both
 * to CONFIG and INFO; the checks that use them degrade (src/redis.ts).
 */
export function isCommandRefused(error: unknown): boolean {
  return error instanceof Error && /^(NOPERM\b|ERR unknown command\b)/.test(error.message);
}

/**
 * The ACL refused this user a command, a key or a channel (`NOPERM ...`; or a MULTI discarded for
 * one: EXECABORT): its reply, for messages.
 */
export function noPermissionReply(error: unknown): string | undefined {
  return replyBehind(error, /^NOPERM\b/);
}

/** Certificate problems the client found (Node's codes), in words, with what to set. */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/**
 * What went wrong in a TLS handshake with Redis, with what to set; undefined for an error that is
 * not about TLS. A certificate no retry will change (untrusted, another host's, expired) is a
 * setting to fix, not an outage.
 */
export function tlsProblem(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (UNTRUSTED_CERTIFICATE.has(code))
    return (
      `the server's certificate is not trusted (${code}). Set BULKORDER_REDIS_TLS_CA to the PEM file of the CA that ` +
      `signed it (for a self-signed certificate, the certificate itself).`
    );
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const { reason, cert } = error as { reason?: unknown; cert?: { subjectaltname?: unknown } };
    const names = typeof cert?.subjectaltname === 'string' ? `; it names ${cert.subjectaltname}` : '';
    return (
      `the server's certificate is for another host (${typeof reason === 'string' ? reason : code}${names}). Use a ` +
      `host name the certificate names in REDIS_URL (or BULKORDER_REDIS_CLUSTER_NODES).`
    );
  }
  if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' || /alert certificate required/i.test(error.message))
    return (
      `the server asks for a client certificate (${code}). Set BULKORDER_REDIS_TLS_CERT and BULKORDER_REDIS_TLS_KEY ` +
      `(and BULKORDER_REDIS_TLS_KEY_PASSPHRASE if the key is encrypted).`
    );
  if (code === 'CERT_HAS_EXPIRED')
    return `the server's certificate has expired (${code}). The Redis server needs a renewed certificate; nothing here can accept it.`;
  if (code === 'CERT_NOT_YET_VALID')
    return `the server's certificate is not valid yet (${code}): check the clocks of this host and the Redis server.`;
  if (
    /wrong version number|ERR_SSL_WRONG_VERSION_NUMBER|packet length too long|before secure TLS connection was established/i.test(
      `${code} ${error.message}`,
    )
  )
    return (
      `the server does not complete a TLS handshake at this address (${error.message}). Use redis:// for a plain ` +
      `port, or the server's TLS port.`
    );
  if (/^ERR_(SSL|TLS)_/.test(code))
    return (
      `the handshake failed (${code}: ${error.message}). Check REDIS_URL's port and BULKORDER_REDIS_TLS_CA, ` +
      `and BULKORDER_REDIS_TLS_CERT and BULKORDER_REDIS_TLS_KEY if the server asks for a client certificate.`
    );
  return undefined;
}
