/**
 * Identifiers the remote APIs return (a remote order id, a customerId) keep their JSON type end
 * to end: the spec leaves the type "not shown", and an API that answered `{"customerId":100001}`
 * may refuse `{"customerId":"100001"}` when it comes back. Kept as text in the ledger and in
 * results files with one encoding that a person reads as the plain id in the usual cases.
 */

/** An identifier exactly as the API returned it: a JSON string or a JSON number. */
export type RemoteId = string | number;

/**
 * The text form of an id, for the ledger, results files and the command line. A number is
 * written as its digits (`100001`); a string as itself (`SIM-7`, a UUID), except a string that
 * would read as something else (digits, `true`, a leading `"`), which is JSON-quoted
 * (`"100001"`). {@link decodeRemoteId} reverses it.
 */
export function encodeRemoteId(id: RemoteId): string {
  if (typeof id === 'number') return JSON.stringify(id);
  return readsAsOtherThanString(id) ? JSON.stringify(id) : id;
}

/**
 * The id an encoded text stands for: a JSON number or JSON string literal is that value, any
 * other text is a string as is. (Entries written before types were kept hold plain text; one of
 * digits only reads back as a number, which is what `login` then sends.)
 */
export function decodeRemoteId(text: string): RemoteId {
  if (text.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'string') return value;
    } catch {
      return text;
    }
  }
  if (NUMBER.test(text)) {
    const value = Number(text);
    if (Number.isFinite(value)) return value;
  }
  return text;
}

/** JSON number syntax (RFC 8259 section 6). */
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

function readsAsOtherThanString(text: string): boolean {
  return text.startsWith('"') || NUMBER.test(text);
}

/** Whether `value` can be an identifier: a non-blank string or a finite number. */
export function isRemoteId(value: unknown): value is RemoteId {
  return (typeof value === 'string' && value.trim() !== '') || (typeof value === 'number' && Number.isFinite(value));
}
