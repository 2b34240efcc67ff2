/**
 * Stored orders. Duplicates are recognised by a SHA-256 of the canonical payload (see
 * canonicalOrder.ts), so memory per order stays small even when payloads are not retained.
 */
import { hash } from 'node:crypto';
import type { AcceptedOrder } from './simulatorTypes.js';

/** The orders one simulator has accepted. */
export class OrderBook {
  readonly #retain: boolean;
  #orders: AcceptedOrder[] = [];
  #seen = new Set<string>();
  #next = 1;

  /** `retain` false keeps only the digests needed to count duplicates. */
  constructor(retain: boolean) {
    this.#retain = retain;
  }

  /**
   * Stores a validated order; `duplicate` when the same `canonical` text was stored before.
   * `number` is the order's sequence number (the id an integer-ids profile answers with).
   */
  store(
    payload: unknown,
    canonical: string,
    now: number,
    idempotencyKey?: string,
  ): { orderId: string; number: number; duplicate: boolean } {
    const number = this.#next++;
    const orderId = `SIM-${number}`;
    const digest = hash('sha256', canonical, 'base64');
    const duplicate = this.#seen.has(digest);
    if (!duplicate) this.#seen.add(digest);
    if (this.#retain)
      this.#orders.push({
        orderId,
        payload,
        receivedAt: new Date(now).toISOString(),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      });
    return { orderId, number, duplicate };
  }

  /** The stored orders, oldest first (a copy of the list). */
  list(): AcceptedOrder[] {
    return [...this.#orders];
  }

  /** Forgets every order; numbering starts again at SIM-1. */
  reset(): void {
    this.#orders = [];
    this.#seen = new Set();
    this.#next = 1;
  }
}
