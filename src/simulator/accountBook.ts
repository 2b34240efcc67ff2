/**
 * Cafetariaplan accounts and their one-time login codes. An account is identified by
 * (companyId, email), both compared case-insensitively: UUIDs and e-mail domains are
 * case-insensitive, and treating local parts the same way is the safer guess for "already exists".
 */
import { randomBytes, randomUUID } from 'node:crypto';

/** Outcome of redeeming a one-time login code. */
export type Redemption = 'ok' | 'used' | 'expired' | 'unknown';

/** The accounts and login codes of one simulator. */
export class AccountBook {
  #byKey = new Map<string, string | number>();
  #customers = new Set<string>();
  #codes = new Map<string, { expiresAt: number; used: boolean }>();
  #next = 100_001;

  /** `ids`: customerIds are UUID strings, JSON integers from 100001, or those digits as strings (the answer profile). */
  constructor(private readonly ids: 'string' | 'integer' | 'digits' = 'string') {}

  /** The next numeric customerId, as a JSON integer or as its digits (the answer profile). */
  #nextNumber(): string | number {
    const n = this.#next++;
    return this.ids === 'digits' ? String(n) : n;
  }

  /** Creates an account; undefined when (companyId, email) already has one. */
  create(companyId: string, email: string): string | number | undefined {
    const key = companyId.toLowerCase() + '\n' + email.toLowerCase();
    if (this.#byKey.has(key)) return undefined;
    const customerId = this.ids === 'string' ? randomUUID() : this.#nextNumber();
    this.#byKey.set(key, customerId);
    this.#customers.add(customerKey(customerId));
    return customerId;
  }

  /**
   * A new one-time login code for a known customer; undefined when the customer is unknown.
   * The id must have the type it was handed out with: 100001 is not "100001".
   */
  login(customerId: string | number, expiresAt: number): string | undefined {
    if (!this.#customers.has(customerKey(customerId))) return undefined;
    const code = randomBytes(24).toString('base64url');
    this.#codes.set(code, { expiresAt, used: false });
    return code;
  }

  /** Redeems a login code once; later attempts answer 'used'. */
  redeem(code: string, now: number): Redemption {
    const entry = this.#codes.get(code);
    if (entry === undefined) return 'unknown';
    if (entry.used) return 'used';
    entry.used = true;
    return now >= entry.expiresAt ? 'expired' : 'ok';
  }

  /** Forgets every account and code. */
  reset(): void {
    this.#byKey = new Map();
    this.#customers = new Set();
    this.#codes = new Map();
    this.#next = 100_001;
  }
}

function customerKey(customerId: string | number): string {
  return typeof customerId === 'number' ? `n:${customerId}` : `s:${customerId.toLowerCase()}`;
}
