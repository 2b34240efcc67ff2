import type { Outcome, OutcomeKind } from '../delivery/classifyOutcome.js';

/**
 * What one attempt's outcome tells the circuit breaker. `refusal`: the API answered with an
 * error (judged by status + code, so a code we never saw still counts when every order gets it);
 * `serverFailing`: a 5xx of any kind or no answer after sending (one class: an outage answers
 * 500, 502, 503 and 504 in a mix); `unreachable`: no connection; `credentials`: 401 even with a
 * fresh token.
 */
export type EvidenceClass = 'refusal' | 'serverFailing' | 'unreachable' | 'credentials';

export type Evidence =
  | { kind: 'healthy' }
  /** Says nothing about the API's health (429: the shared rate slows down instead). */
  | { kind: 'neutral' }
  | {
      kind: 'failure';
      class: EvidenceClass;
      signature: string;
      /** What the breaker's reason counts this failure as: the status (`502`) or `no answer`. */
      label: string;
      status?: number;
      code: string;
      message: string;
    };

/** The one signature of the `serverFailing` class. */
export const SERVER_FAILING = 'SERVER_FAILING';

/** One row per outcome kind: the first place a new kind must be added, like classifyOutcome's tables. */
const EVIDENCE: { readonly [K in OutcomeKind]: (outcome: Extract<Outcome, { kind: K }>) => Evidence } = {
  delivered: () => ({ kind: 'healthy' }),
  rateLimited: () => ({ kind: 'neutral' }),
  // The API answered, with an error in a 2xx: a refusal judged by its code, as a 4xx would be.
  errorBody: (o) => refusal(o.status, o.code, o.message),
  // 409: the record conflicts with what the API holds (an account that exists): the API judged this record.
  permanent: (o) => (o.status === 409 ? { kind: 'healthy' } : refusal(o.status, o.code, o.message)),
  unauthorized: (o) => ({
    kind: 'failure',
    class: 'credentials',
    signature: 'CREDENTIALS_REFUSED',
    label: String(o.status),
    status: o.status,
    code: o.code,
    message: o.message,
  }),
  // Sent, then no (complete) answer: a timeout or a cut connection, the way a failing server behaves.
  ambiguous: (o) => ({
    kind: 'failure',
    class: 'serverFailing',
    signature: SERVER_FAILING,
    label: 'no answer',
    ...(o.status === undefined ? {} : { status: o.status }),
    code: o.code,
    message: o.message,
  }),
  // No status means the request never left (no connection); a 5xx is the server failing, whatever its code.
  retry: (o) => {
    if (o.status === undefined)
      return {
        kind: 'failure',
        class: 'unreachable',
        signature: 'NO_CONNECTION',
        label: o.code,
        code: o.code,
        message: o.message,
      };
    if (o.status >= 500)
      return {
        kind: 'failure',
        class: 'serverFailing',
        signature: SERVER_FAILING,
        label: String(o.status),
        status: o.status,
        code: o.code,
        message: o.message,
      };
    return refusal(o.status, o.code, o.message);
  },
};

function refusal(status: number, code: string, message: string): Evidence {
  return {
    kind: 'failure',
    class: 'refusal',
    signature: `HTTP ${status} ${code}`,
    label: String(status),
    status,
    code,
    message,
  };
}

/** The breaker's reading of one outcome. */
export function breakerEvidence(outcome: Outcome): Evidence {
  return (EVIDENCE[outcome.kind] as (o: Outcome) => Evidence)(outcome);
}
