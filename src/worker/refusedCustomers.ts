import type { RedisClient } from '../redis.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import { reasonWithDetails } from '../delivery/errorDetails.js';
import { ORDER_WORDING, type RecordWording } from '../kinds/recordWording.js';
import type { Verdict } from './verdictOf.js';

/** The API's answer that refused a customer's order: kept per customer, given to its held orders. */
export interface RefusedAnswer {
  status: number;
  code: string;
  message: string;
  body?: unknown;
  bodyTruncated?: boolean;
}

/** The answer of a refusal worth keeping (a 4xx the API judged), as the breaker's answers hash keeps it. */
export function refusedAnswerOf(outcome: ApiOutcome): RefusedAnswer | undefined {
  if (outcome.kind !== 'permanent') return undefined;
  const { status, code, message, body, bodyTruncated } = outcome;
  return { status, code, message, body, bodyTruncated };
}

/**
 * This process's copy of the customers a healthy trial of another customer proved refused
 * (`breakerRefused`, written by closeBreaker-5.lua): read again when its `@closedAt` changes, so
 * each check before a send costs no Redis command.
 */
export class RefusedCustomers {
  private closedAt = 0;
  private answers = new Map<string, RefusedAnswer>();

  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
  ) {}

  /** One HGET; the whole hash only when another close wrote it. */
  async refresh(): Promise<void> {
    const stamp = Number((await this.redis.hget(this.key, '@closedAt')) ?? '0');
    if (stamp === this.closedAt) return;
    const all = stamp === 0 ? {} : await this.redis.hgetall(this.key);
    const answers = new Map<string, RefusedAnswer>();
    for (const [customer, json] of Object.entries(all)) {
      if (customer === '@closedAt') continue;
      try {
        answers.set(customer, JSON.parse(json) as RefusedAnswer);
      } catch {
        // Not ours to judge: that customer's orders are sent as usual.
      }
    }
    this.answers = answers;
    this.closedAt = stamp;
  }

  /**
   * The answer that refused `customer`, when its order was queued (`queuedAt`, ms) before the close
   * that proved the customer refused: such an order was held back by the breaker and is not sent.
   */
  answerFor(customer: string | undefined, queuedAt: number | undefined): RefusedAnswer | undefined {
    if (customer === undefined || queuedAt === undefined || queuedAt > this.closedAt) return undefined;
    return this.answers.get(customer.slice(0, 200));
  }
}

/** The verdict for an order of a refused customer, dead-lettered without being sent: the API's answer kept. */
export function notSentVerdict(answer: RefusedAnswer, wording: RecordWording = ORDER_WORDING): Verdict {
  const said = `HTTP ${answer.status} ${answer.code}: ${answer.message}`;
  return {
    next: 'dead',
    answered5xx: false,
    log: 'dead-lettered, not sent: the API refused its customer',
    facts: {
      reason:
        `Not sent: the API refused this customer's ${wording.noun}s (${said}) while it accepted another customer's, ` +
        `so this ${wording.noun}, held back by the circuit breaker, was dead-lettered without sending it.`,
      httpStatus: answer.status,
      code: answer.code,
      message: reasonWithDetails(answer.message, answer.body),
      ...(answer.body === undefined ? {} : { body: answer.body }),
      ...(answer.bodyTruncated === undefined ? {} : { bodyTruncated: answer.bodyTruncated }),
    },
  };
}
