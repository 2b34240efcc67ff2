import type { Outcome, OutcomeKind } from '../delivery/classifyOutcome.js';

/**
 * What one attempt's outcome tells the circuit breaker. `refusal`: the API answered with an
 * error (judged by status + code, so a code we never saw still counts when every order gets it);
 * `unreachable`: no connection or no answer; `credentials`: 401 even with a fresh token.
 */
export type EvidenceClass = 'refusal' | 'unreachable' | 'credentials';

export type Evidence =
  | { kind: 'healthy' }
  /** Says nothing about the API's health (429: the rate limiter already pauses the queue). */
  | { kind: 'neutral' }
  | { kind: 'failure'; class: EvidenceClass; signature: string; status?: number; code: string; message: string };

/** One row per outcome kind: the first place a new kind must be added, like classifyOutcome's tables. */
const EVIDENCE: { readonly [K in OutcomeKind]: (outcome: Extract<Outcome, { kind: K }>) => Evidence } = {
  delivered: () => ({ kind: 'healthy' }),
  rateLimited: () => ({ kind: 'neutral' }),
  // 409: the record conflicts with what the API holds (an account that exists): the API judged this record.
  permanent: (o) => (o.status === 409 ? { kind: 'healthy' } : { kind: 'failure', class: 'refusal', signature: `HTTP ${o.status} ${o.code}`, status: o.status, code: o.code, message: o.message }),
  unauthorized: (o) => ({ kind: 'failure', class: 'credentials', signature: 'CREDENTIALS_REFUSED', status: o.status, code: o.code, message: o.message }),
  // The request may have arrived: each such order is held; many of them mean the API stopped answering.
  ambiguous: (o) => ({ kind: 'failure', class: 'unreachable', signature: 'NO_ANSWER', ...(o.status === undefined ? {} : { status: o.status }), code: o.code, message: o.message }),
  // A 5xx is a refusal by status + code; no status means the request never left (no connection).
  retry: (o) =>
    o.status === undefined
      ? { kind: 'failure', class: 'unreachable', signature: 'NO_CONNECTION', code: o.code, message: o.message }
      : { kind: 'failure', class: 'refusal', signature: `HTTP ${o.status} ${o.code}`, status: o.status, code: o.code, message: o.message },
};

/** The breaker's reading of one outcome. */
export function breakerEvidence(outcome: Outcome): Evidence {
  return (EVIDENCE[outcome.kind] as (o: Outcome) => Evidence)(outcome);
}
