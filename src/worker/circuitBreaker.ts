import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { Logger } from '../logger.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import { breakerEvidence, type Evidence } from './breakerEvidence.js';
import { breakerReason, readBreakerStatus, type BreakerState, type BreakerStatus } from './breakerView.js';
import { argv } from '../lua/scriptArgv.js';
import { defineScripts } from '../lua/defineScripts.js';
import type { ChunkClaimResult, ClaimGate } from '../ledger/ledger.js';
import type { BreakerSettings } from '../deliverySettings.js';
import { RefusedCustomers, refusedAnswerOf, type RefusedAnswer } from './refusedCustomers.js';
import { REDIS_TIME } from '../redis/redisClock.js';

export { readBreakerStatus, type BreakerState, type BreakerStatus } from './breakerView.js';

/** How long refusals a trial of another customer proved to be about their customers stay no evidence. */
const EXEMPT_MS = 60 * 60_000;
/** Half-open, how long trials go only to customers the refusals never named before any job may be one. */
const TRIAL_FALLBACK_MAX_MS = 10_000;

/** A transition, reported once (by the worker whose call made it) to `onBreakerEvent`. */
export interface BreakerEvent {
  type: 'opened' | 'reopened' | 'halfOpen' | 'closed' | 'stuck';
  status: BreakerStatus;
  /** On `closed`: dead letters of the burst sent back to the queue. */
  requeued?: number;
}

export interface CircuitBreakerOptions {
  settings: BreakerSettings;
  /** Pauses the queue for every worker (BullMQ `queue.pause()`). */
  pauseQueue(): Promise<void>;
  /** Resumes it for the trial calls. */
  resumeQueue(): Promise<void>;
  /** Sends the burst's dead letters back to the queue on close; returns how many went. Default: none. */
  requeueBurst?(orderKeys: readonly string[]): Promise<number>;
  /**
   * Called once per transition, across all workers: the hook for notifications (issue 15).
   * `stuck` means open longer than settings.alertAfterMs. Errors it throws are logged, not raised.
   */
  onBreakerEvent?(event: BreakerEvent): void | Promise<void>;
  /** Trials that never report are granted again after this; default 2 minutes (above a request deadline). */
  trialTimeoutMs?: number;
  /** Pins the time (tests), given to the scripts too; without it the scripts read Redis's TIME. */
  now?: () => number;
  /** Redis's clock for this process's waits (RedisClock.now); default the host's. */
  clock?: () => number;
}

/** What a job may do now. */
export type Admission = { go: true; trial: boolean } | { go: false; waitMs: number };

/**
 * Opens only on evidence: within a sliding window shared by all workers through Redis, enough
 * attempts over enough distinct orders failed in the same systemic way (README "Circuit
 * breaker"). Open, it pauses the queue; after a growing wait it lets a few trial jobs through
 * (half-open): a healthy answer closes it and requeues the dead letters of the burst that
 * opened it, a failure reopens it. A person's `bulkorder pause` is never undone by it.
 */
export class CircuitBreaker {
  private readonly settings: BreakerSettings;
  private readonly now: () => number;
  /** What the scripts are given as `now`: REDIS_TIME, or a test's pinned time. */
  private readonly scriptNow: () => number | string;
  /** This process's last view of the state: a closed breaker costs no Redis call per job. */
  private view: BreakerState = 'closed';
  private healthy = 0;
  private readonly refused: RefusedCustomers;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    private readonly logger: Logger,
    private readonly options: CircuitBreakerOptions,
  ) {
    this.settings = options.settings;
    this.now = options.now ?? options.clock ?? Date.now;
    this.scriptNow = options.now ?? (() => REDIS_TIME);
    this.refused = new RefusedCustomers(redis, keys.breakerRefused);
    defineScripts(redis);
  }

  /** Asks before a job is sent: closed says go (no Redis call), half-open grants a few trials, open says wait. */
  async admit(): Promise<Admission> {
    if (this.view === 'closed') return { go: true, trial: false };
    const [verdict, nextProbeAt] = await this.redis.bulkorderAdmit(this.keys.breaker);
    if (verdict === 'go') this.view = 'closed';
    if (verdict === 'go' || verdict === 'trial') return { go: true, trial: verdict === 'trial' };
    return { go: false, waitMs: Math.max(1000, Number(nextProbeAt) - this.now()) };
  }

  /**
   * What the ledger's claim asks first (the same judgement as `admit`, in the claim's own script),
   * or undefined while this process sees the breaker closed: a closed breaker costs a job nothing.
   */
  gate(customers?: readonly string[]): ClaimGate | undefined {
    if (this.view === 'closed') return undefined;
    if (customers === undefined) return { key: this.keys.breaker };
    return { key: this.keys.breaker, customers: customers.map((customer) => customer.slice(0, 200)) };
  }

  /**
   * The answer that refused `customer`, when a healthy trial of another customer proved the refusals
   * about it and the order was queued (`queuedAt`) before: that order is dead-lettered, not sent.
   */
  refusedAnswer(customer: string | undefined, queuedAt: number | undefined): RefusedAnswer | undefined {
    return this.refused.answerFor(customer, queuedAt);
  }

  /** The admission a claim made with `gate()` carries, read as `admit` reads its own verdict. */
  admission(claim: ChunkClaimResult): Admission {
    if (claim.outcome === 'wait') return { go: false, waitMs: Math.max(1000, claim.retryAt - this.now()) };
    if (!claim.trial) this.view = 'closed';
    return { go: true, trial: claim.trial };
  }

  /** True while this process sees the breaker open or half-open: a failure then is the outage's, not the order's. */
  holdsBack(): boolean {
    return this.view !== 'closed';
  }

  /**
   * Records one attempt's outcome; opens, reopens or closes the breaker when the evidence says so.
   * `customer`: whom the record is for (orders: businessCustomerId); a refusal is systemic only
   * across several customers. Unknown, each record counts as a customer of its own.
   * `batch`: the record's batch; a refusal is the API's only across settings.minBatches batches
   * (one batch's content is its own circuit's: src/worker/batchCanary.ts). Unknown: a batch of its own.
   */
  async record(outcome: ApiOutcome, orderKey: string, customer?: string, batch?: string): Promise<void> {
    const evidence = breakerEvidence(outcome);
    if (evidence.kind === 'neutral') return;
    const who = (customer ?? orderKey).slice(0, 200);
    if (evidence.kind === 'healthy') {
      // Closed: counted in a batch each tick. Otherwise an answer may close the breaker now.
      if (this.view === 'closed') this.healthy++;
      else await this.close(true, customer?.slice(0, 200) ?? '');
      return;
    }
    const s = this.settings;
    const credentials = evidence.class === 'credentials';
    const now = this.now();
    // This process's successes since the last tick are judged with this failure: counted only at the
    // tick, a fast run's burst of refusals would be weighed against a window without its successes.
    const healthy = this.healthy;
    this.healthy = 0;
    const signature = evidence.signature.slice(0, 200);
    if (evidence.class === 'refusal') await this.keepAnswer(outcome, who);
    const reply = await this.redis.bulkorderRecordFailure(
      this.keys.breaker,
      this.keys.breakerFailures + signature,
      this.keys.breakerOrders + signature,
      this.keys.breakerBurst,
      this.keys.breakerCustomers + signature,
      this.keys.breakerExempt,
      this.keys.breakerBatches + signature,
      ...argv('recordFailure', {
        now: this.scriptNow(),
        windowMs: s.windowMs,
        bucketPrefix: this.keys.breakerBuckets,
        attemptId: `${evidence.label.slice(0, 40)}|${now}:${randomBytes(6).toString('hex')}`,
        orderKey,
        signature,
        minAttempts: credentials ? s.credentialsMinAttempts : s.minAttempts,
        minOrders: credentials ? 1 : s.minOrders,
        ratio: {
          refusal: s.refusalRatio,
          serverFailing: s.serverFailingRatio,
          unreachable: s.unreachableRatio,
          credentials: s.refusalRatio,
        }[evidence.class],
        openMs: s.openMs,
        maxOpenMs: s.maxOpenMs,
        class: evidence.class,
        status: evidence.status ?? '',
        code: evidence.code.slice(0, 200),
        message: evidence.message.slice(0, 500),
        healthy,
        customer: who,
        minCustomers: evidence.class === 'refusal' ? s.minCustomers : 1,
        batch: (batch ?? orderKey).slice(0, 200),
        minBatches: evidence.class === 'refusal' ? s.minBatches : 1,
      }),
    );
    this.view = reply[1];
    await this.afterFailure(reply, evidence);
  }

  /** Keeps a refusal's answer for its customer: a close that proves the customer refused gives it to its held orders. */
  private async keepAnswer(outcome: ApiOutcome, customer: string): Promise<void> {
    const answer = refusedAnswerOf(outcome);
    if (answer === undefined) return;
    await this.redis
      .multi()
      .hset(this.keys.breakerAnswers, customer, JSON.stringify(answer))
      .pexpire(this.keys.breakerAnswers, EXEMPT_MS)
      .exec();
  }

  /** Says why it opened (what was seen), pauses and announces an opening; closes on `closeNow`. */
  private async afterFailure(
    reply: [string, BreakerState, ...(string | number)[]],
    evidence: Extract<Evidence, { kind: 'failure' }>,
  ): Promise<void> {
    const transition = reply[0];
    if (transition === 'opened') {
      const [failures, total, orders, customers, counts] = reply.slice(2) as [number, number, number, number, string];
      const reason = breakerReason(evidence, {
        failures,
        total,
        orders,
        customers,
        counts: JSON.parse(counts) as Record<string, number>,
        windowMs: this.settings.windowMs,
      });
      await this.redis.hset(this.keys.breaker, 'reason', reason, 'counts', counts);
    }
    if (transition === 'opened' || transition === 'reopened') {
      await this.options.pauseQueue();
      const status = await this.status();
      this.logger.error(
        { breaker: status },
        `circuit breaker ${transition}: delivery paused; next trial at ${isoTime(status.nextProbeAt)}`,
      );
      await this.emit({ type: transition, status });
    } else if (transition === 'closeNow') {
      await this.close(true, '');
    }
  }

  /**
   * Once a second from every worker: flushes counted successes, turns an open breaker whose
   * wait is over half-open (resuming the queue for the trials) and raises the long-open alert.
   */
  async tick(): Promise<void> {
    if (this.healthy > 0) {
      const count = this.healthy;
      this.healthy = 0;
      await this.redis.bulkorderRecordHealthy(
        this.keys.breaker,
        this.keys.breakerBuckets,
        this.scriptNow(),
        this.settings.windowMs,
        count,
      );
    }
    const [transition, state] = await this.redis.bulkorderTickBreaker(
      this.keys.breaker,
      this.keys.pausedBy,
      ...argv('tickBreaker', {
        now: this.scriptNow(),
        trialCalls: this.settings.trialCalls,
        trialTimeoutMs: this.options.trialTimeoutMs ?? 120_000,
        alertAfterMs: this.settings.alertAfterMs,
        trialFallbackMs: Math.min(this.settings.openMs, TRIAL_FALLBACK_MAX_MS),
      }),
    );
    this.view = state;
    await this.refused.refresh();
    if (transition === 'halfOpen') {
      await this.options.resumeQueue();
      // A trial needs a job: when the burst dead-lettered the whole night, one of its orders is the trial.
      const probe = await this.redis.spop(this.keys.breakerBurst);
      if (probe !== null) {
        const sent = await this.options.requeueBurst?.([probe]).catch(() => 0);
        if (sent !== 1) await this.redis.sadd(this.keys.breakerBurst, probe);
      }
      const status = await this.status();
      this.logger.warn(
        { breaker: status },
        `circuit breaker half-open: letting ${this.settings.trialCalls} trial jobs through`,
      );
      await this.emit({ type: 'halfOpen', status });
    } else if (transition === 'stuck') {
      const status = await this.status();
      this.logger.error(
        { breaker: status },
        `circuit breaker open for more than ${Math.round(this.settings.alertAfterMs / 60_000)} min: delivery is stalled; ${status.reason ?? ''}`,
      );
      await this.emit({ type: 'stuck', status });
    }
  }

  /** A person's `resume`: closes whatever the state and requeues the burst. The caller resumes the queue. */
  async reset(): Promise<number> {
    return this.close(false, '');
  }

  async status(): Promise<BreakerStatus> {
    return readBreakerStatus(this.redis, this.keys, this.settings.alertAfterMs, this.now());
  }

  /**
   * `trialCustomer`: the customer of the healthy answer that closes it. One the trip never refused
   * proves the refusals were about their customers: their dead letters stay (`about: customers`).
   */
  private async close(onlyHalfOpen: boolean, trialCustomer: string): Promise<number> {
    const before = await this.status();
    const keys = this.keys;
    const [verdict, about, ...burst] = await this.redis.bulkorderCloseBreaker(
      keys.breaker,
      keys.breakerBurst,
      keys.breakerExempt,
      keys.breakerAnswers,
      keys.breakerRefused,
      ...argv('closeBreaker', {
        now: this.scriptNow(),
        onlyHalfOpen: onlyHalfOpen ? '1' : '0',
        failuresPrefix: keys.breakerFailures,
        ordersPrefix: keys.breakerOrders,
        customersPrefix: keys.breakerCustomers,
        trialCustomer,
        exemptMs: EXEMPT_MS,
      }),
    );
    if (verdict !== 'closed') return 0;
    this.view = 'closed';
    if (about === 'customers') {
      await this.refused.refresh();
      this.logger.warn(
        { breaker: before },
        'circuit breaker closed: another customer was served, so the refusals were about the refused customers; their orders stay dead-lettered, and those held back are dead-lettered with the same answer, not sent',
      );
      await this.emit({ type: 'closed', status: { state: 'closed', overdue: false }, requeued: 0 });
      return 0;
    }
    let requeued = 0;
    try {
      requeued = burst.length === 0 ? 0 : ((await this.options.requeueBurst?.(burst)) ?? 0);
    } catch (error) {
      this.logger.error(
        { err: error, orders: burst.length },
        'could not requeue the dead letters of the burst: `bulkorder dead-letters retry` sends them',
      );
    }
    this.logger.warn(
      { breaker: before, requeued },
      `circuit breaker closed: delivery goes on; ${requeued} dead-lettered by the burst sent again`,
    );
    await this.emit({ type: 'closed', status: { state: 'closed', overdue: false }, requeued });
    return requeued;
  }

  private async emit(event: BreakerEvent): Promise<void> {
    try {
      await this.options.onBreakerEvent?.(event);
    } catch (error) {
      this.logger.error({ err: error, event: event.type }, 'the breaker event hook failed');
    }
  }
}

function isoTime(at: number | undefined): string {
  return at === undefined ? 'unknown' : new Date(at).toISOString();
}
