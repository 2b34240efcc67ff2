import { inspect } from 'node:util';

/** A secret that prints as `[redacted]` in logs, JSON and util.inspect; `reveal()` only where it is sent. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return '[redacted]';
  }
}

/** A secret printed, logged and serialised as a text that gives nothing away (a masked URL, a file's path). */
class ShownSecret extends Secret {
  readonly #shown: string;
  constructor(value: string, shown: string) {
    super(value);
    this.#shown = shown;
  }
  override toString(): string {
    return this.#shown;
  }
  override toJSON(): string {
    return this.#shown;
  }
  override [inspect.custom](): string {
    return this.#shown;
  }
}

/**
 * A URL whose password is a secret (REDIS_URL): printed, logged or serialised it shows the URL
 * with the password replaced (`redis://user:***@host:6379`), so the host stays visible to whoever
 * reads `bulkorder config` or an error; `reveal()` is for the one place a connection is made.
 */
export class SecretUrl extends ShownSecret {
  constructor(value: string) {
    super(value, maskPassword(value));
  }
}

/**
 * A PEM (TLS certificate, CA or private key) given as a file path or inline: `reveal()` is its text,
 * printed it shows the path, or `(inline PEM)`, never the text (a private key is a secret).
 */
export class PemSource extends ShownSecret {
  constructor(pem: string, path: string | undefined) {
    super(pem, path ?? '(inline PEM)');
  }
}

/** Query parameters that carry a credential (ioredis reads `?password=`, `?sentinelPassword=` ... as options). */
const SECRET_PARAMETER = /pass|secret|token|key|auth|cred/i;

/**
 * A URL with every credential replaced, fit for messages and logs: the password of its user info
 * (a user name alone, `redis://secret@host`, may be a password written the old way: replaced too)
 * and the value of any query parameter that may hold one (`?password=`).
 */
export function maskPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    else if (parsed.username) parsed.username = '***';
    for (const name of [...parsed.searchParams.keys()])
      if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, '***');
    // URLSearchParams escapes the stars: a masked value reads as `***`, not `%2A%2A%2A`.
    return parsed.toString().replace(/%2A%2A%2A/g, '***');
  } catch {
    return '(unparseable URL)';
  }
}
