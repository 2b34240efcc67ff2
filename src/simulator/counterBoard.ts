/**
 * The simulator's counters, kept as plain numbers on one object so that counting costs a
 * property increment per request. `snapshot()` hands out copies, never the live object.
 */
import type { ApiName, FaultKind, SimulatorCounters } from './simulatorTypes.js';

const FAULT_KINDS: readonly FaultKind[] = [
  'latency',
  'serverError',
  'storedThenError',
  'noAnswer',
  'rateLimited',
  'tokenFailure',
  'tokenLatency',
  'scripted',
];

/** Mutable counters of one simulator. */
export class CounterBoard {
  readonly #seed: number;
  #c: SimulatorCounters;

  constructor(seed: number) {
    this.#seed = seed;
    this.#c = emptyCounters(seed);
  }

  request(): void {
    this.#c.requests++;
  }
  apiRequest(api: ApiName): void {
    this.#c.apiRequests[api]++;
  }
  tokenRequest(api: ApiName | 'unknown'): void {
    this.#c.tokenRequests[api]++;
  }
  tokenIssued(api: ApiName): void {
    this.#c.tokensIssued[api]++;
  }
  orderAccepted(duplicate: boolean): void {
    this.#c.ordersAccepted++;
    if (duplicate) this.#c.duplicateOrdersAccepted++;
  }
  accountCreated(): void {
    this.#c.accountsCreated++;
  }
  idempotencyKey(): void {
    this.#c.idempotencyKeys++;
  }
  idempotentReplay(): void {
    this.#c.idempotentReplays++;
  }
  login(): void {
    this.#c.logins++;
  }
  ssoRedeemed(): void {
    this.#c.ssoRedeemed++;
  }
  fault(kind: FaultKind): void {
    this.#c.faults[kind]++;
  }
  /** Counts one answer; `code` is the machine code of an error answer. */
  answer(status: number, code: string | undefined): void {
    const statuses = this.#c.statuses;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (code !== undefined) this.#c.errors[code] = (this.#c.errors[code] ?? 0) + 1;
  }
  enterFlight(): void {
    const c = this.#c;
    c.inFlight++;
    if (c.inFlight > c.peakConcurrency) c.peakConcurrency = c.inFlight;
  }
  leaveFlight(): void {
    this.#c.inFlight--;
  }

  /** A deep copy of the counters now. */
  snapshot(): SimulatorCounters {
    const c = this.#c;
    return {
      ...c,
      apiRequests: { ...c.apiRequests },
      tokenRequests: { ...c.tokenRequests },
      tokensIssued: { ...c.tokensIssued },
      errors: { ...c.errors },
      statuses: { ...c.statuses },
      faults: { ...c.faults },
    };
  }

  /** Zeroes everything except requests still in flight (they have not ended yet). */
  reset(): void {
    const inFlight = this.#c.inFlight;
    this.#c = emptyCounters(this.#seed);
    this.#c.inFlight = inFlight;
    this.#c.peakConcurrency = inFlight;
  }
}

function emptyCounters(seed: number): SimulatorCounters {
  return {
    seed,
    requests: 0,
    apiRequests: { business: 0, cafetariaplan: 0 },
    tokenRequests: { business: 0, cafetariaplan: 0, unknown: 0 },
    tokensIssued: { business: 0, cafetariaplan: 0 },
    ordersAccepted: 0,
    duplicateOrdersAccepted: 0,
    accountsCreated: 0,
    idempotencyKeys: 0,
    idempotentReplays: 0,
    logins: 0,
    ssoRedeemed: 0,
    errors: {},
    statuses: {},
    faults: Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>,
    inFlight: 0,
    peakConcurrency: 0,
  };
}
