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

/**
 * A URL whose password is a secret (REDIS_URL): printed, logged or serialised it shows the URL
 * with the password replaced (`redis://user:***@host:6379`), so the host stays visible to whoever
 * reads `bulkorder config` or an error; `reveal()` is for the one place a connection is made.
 */
export class SecretUrl extends Secret {
  readonly #shown: string;
  constructor(value: string) {
    super(value);
    this.#shown = maskPassword(value);
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

/** A URL with any password replaced, fit for messages and logs. */
export function maskPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
