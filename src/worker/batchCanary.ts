import type { RedisClient } from '../redis.js';
import type { Keyspace } from '../keyspace.js';
import type { Logger } from '../logger.js';
import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import { defineScripts } from '../lua/defineScripts.js';
import { argv } from '../lua/scriptArgv.js';
import { DEFAULT_CANARY, type CanarySettings } from '../deliverySettings.js';
import { logBatchCircuitEvent, readBatchCircuit, type BatchCircuitEvent } from '../batches/batchCircuit.js';
import { readBatchView, type BatchWait } from '../batches/putBackChunks.js';
import { BatchWaits } from './batchWaits.js';

/** How long a batch's circuit is kept after its last change: beyond any night's run. */
const CIRCUIT_TTL_MS = 14 * 24 * 3600_000;
/** How often a process looks at a batch whose chunks wait in place for it (src/worker/batchWaits.ts). */
const WAIT_LOOK_MS = 50;
/** How long a record beyond the canary waits before it asks again whether the canary has spoken. */
const CANARY_WAIT_MS = 1_500;
/** A process trusts its view that a batch flows this long: a cancel reaches it within it. */
const FLOWING_VIEW_MS = 2_000;
/** How often a process looks, per batch its canary judges, for canary records that ended unheard. */
const SILENT_LOOK_MS = 5_000;

/** What one record of a wave may do (batchGate-4.lua). */
export type CanaryDecision =
  | { kind: 'go' }
  | { kind: 'probe' }
  | { kind: 'wait' }
  /** Waits because its batch's file is still read (its worker wakes the job once the read has ended). */
  | { kind: 'read' }
  | { kind: 'cancel' }
  /** Refused while the batch was judged, which then passed: ends with this answer, not sent again. */
  | { kind: 'answer'; outcome: ApiOutcome };

export interface CanaryGate {
  decisions: CanaryDecision[];
  /** How long the records told to wait should wait. */
  waitMs: number;
  /** The batch is judged (canary) or held: each answer is told to `record`. */
  watched: boolean;
  /** The batch's circuit's state (batchGate-4.lua): canary, flowing, released, held or cancelled. */
  state: string;
}

export type { BatchCircuitEvent } from '../batches/batchCircuit.js';

export interface BatchCanaryOptions {
  settings?: CanarySettings;
  /** Trials that never report are granted again after this (above a request deadline). */
  probeTimeoutMs: number;
  /** Called once per transition across all workers (notifications). Errors are logged, not raised. */
  onEvent?(event: BatchCircuitEvent): void | Promise<void>;
  /**
   * Promotes the batch's chunks that rest delayed (src/batches/wakeBatch.ts), once its canary passed or
   * a probe resumed it: they go now, not when their rest ends. Errors are logged, not raised.
   */
  wake?(batchId: string): Promise<void>;
  /**
   * How each of these records ended, from the ledger: `accepted` (delivered), `neutral` (held or
   * dead-lettered), undefined while it may still be sent. For canary records that ended without an
   * answer the canary heard (see countSilent).
   */
  ended?(orderKeys: readonly string[]): Promise<('accepted' | 'neutral' | undefined)[]>;
}

/**
 * One circuit per batch, beside the API's (src/worker/circuitBreaker.ts). A batch starts with a
 * canary: its first `orders` records go, the rest wait. When more than `refusedPercent` of the
 * canary is refused with one cause (status + code) the batch holds itself: nothing more of it is
 * sent, its refused records wait with it (never dead-lettered for it), other batches go on. A held
 * batch sends one probe (a record not yet tried) after `probeMs`, then twice as late each time: an
 * accepted probe resumes it and its refused records are sent again. Every time decision is Redis's
 * (TIME inside the scripts), so workers on several hosts agree.
 */
export class BatchCanary {
  private readonly settings: CanarySettings;
  /** Batches this process saw flowing with no refusal kept, until when (ms): they cost no Redis call. */
  private readonly flowing = new Map<string, number>();
  private readonly waits: BatchWaits;
  /** When this process last looked for a judged batch's canary records that ended unheard (countSilent). */
  private readonly silentLooks = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    private readonly logger: Logger,
    private readonly options: BatchCanaryOptions,
  ) {
    this.settings = options.settings ?? DEFAULT_CANARY;
    defineScripts(redis);
    this.waits = new BatchWaits((batchId) => readBatchView(redis, keys, batchId, this.settings.orders), WAIT_LOOK_MS);
  }

  /**
   * Holds a chunk its batch kept back whole (`wait`: its file still read, or its canary judging it)
   * in place, up to `maxMs` (src/worker/batchWaits.ts): true once it may ask again, false when it
   * should rest delayed (time up, the batch held, `stopping`).
   */
  untilFree(batchId: string, wait: BatchWait, options: { maxMs: number; stopping?: () => boolean }): Promise<boolean> {
    return this.waits.until(batchId, wait, options);
  }

  /** Asks, before a wave of one batch is claimed, what each of its records may do. */
  async admit(batchId: string, orderKeys: readonly string[]): Promise<CanaryGate> {
    const until = this.flowing.get(batchId);
    if (until !== undefined && until > Date.now()) {
      return { decisions: orderKeys.map(() => ({ kind: 'go' })), waitMs: 0, watched: false, state: 'flowing' };
    }
    const k = this.keys;
    const [state, waitMs, refusedCount, ...raw] = await this.redis.bulkorderBatchGate(
      k.batchCircuit(batchId),
      k.batchCanaryGranted(batchId),
      k.batchCanaryRefused(batchId),
      k.batch(batchId),
      this.settings.orders,
      CIRCUIT_TTL_MS,
      this.options.probeTimeoutMs,
      CANARY_WAIT_MS,
      ...orderKeys,
    );
    if ((state === 'flowing' || state === 'released') && Number(refusedCount) === 0)
      this.flowing.set(batchId, Date.now() + FLOWING_VIEW_MS);
    else this.flowing.delete(batchId);
    if (state !== 'canary') this.silentLooks.delete(batchId);
    else if (raw.includes('wait')) await this.countSilent(batchId);
    return {
      decisions: raw.map(decisionOf),
      waitMs: Number(waitMs),
      watched: state === 'canary' || state === 'held',
      state,
    };
  }

  /**
   * Tells the circuit of a watched record's final answer (or a refusal). `defer`: the record was
   * refused while its batch is judged or held: it goes back to queued and waits with its batch.
   */
  async record(batchId: string, orderKey: string, outcome: ApiOutcome): Promise<'count' | 'defer'> {
    const refused = isContentRefusal(outcome);
    const answered = outcome.kind === 'delivered' ? 'accepted' : 'neutral';
    return this.tell(batchId, orderKey, refused ? { kind: 'refused', outcome } : { kind: answered });
  }

  /**
   * Counts, as answers that say nothing of the content (or, for a delivered one, as accepted), the
   * canary records that ended without an answer the canary heard: held or dead-lettered when their
   * worker died mid-send (the reconciler, a stalled-out job), or found `sending` by the next. Without
   * it the canary would wait for them for ever and its batch with it. At most every SILENT_LOOK_MS
   * per batch and process; a failure is logged, not raised (the next look tries again).
   */
  private async countSilent(batchId: string): Promise<void> {
    const { ended } = this.options;
    const last = this.silentLooks.get(batchId) ?? 0;
    if (ended === undefined || Date.now() - last < SILENT_LOOK_MS) return;
    this.silentLooks.set(batchId, Date.now());
    try {
      const k = this.keys;
      const granted = await this.redis.smembers(k.batchCanaryGranted(batchId));
      if (granted.length === 0) return;
      const heard = await this.redis.hmget(k.batchCircuit(batchId), ...granted.map((key) => `d:${key}`));
      const unheard = granted.filter((_, i) => heard[i] === null);
      const ends = await ended(unheard);
      for (const [i, key] of unheard.entries()) {
        const kind = ends[i];
        if (kind !== undefined) await this.tell(batchId, key, { kind });
      }
    } catch (error) {
      this.logger.warn({ err: error, batchId }, 'could not count the canary records that ended unheard');
    }
  }

  private async tell(
    batchId: string,
    orderKey: string,
    answer: { kind: 'accepted' | 'neutral' } | { kind: 'refused'; outcome: ApiOutcome },
  ): Promise<'count' | 'defer'> {
    const k = this.keys;
    const { kind } = answer;
    const refused = answer.kind === 'refused';
    const outcome = refused ? answer.outcome : undefined;
    const permanent = outcome?.kind === 'permanent' ? outcome : undefined;
    const [transition, decision] = await this.redis.bulkorderBatchOutcome(
      k.batchCircuit(batchId),
      k.batchCanaryGranted(batchId),
      k.batchCanaryRefused(batchId),
      k.batch(batchId),
      k.heldBatches,
      ...argv('batchOutcome', {
        orderKey,
        kind,
        signature: permanent === undefined ? '' : `HTTP ${permanent.status} ${permanent.code}`.slice(0, 200),
        answer: outcome === undefined ? '' : JSON.stringify(outcome),
        canaryOrders: this.settings.orders,
        refusedPercent: this.settings.refusedPercent,
        probeMs: this.settings.probeMs,
        maxProbeMs: this.settings.maxProbeMs,
        ttlMs: CIRCUIT_TTL_MS,
        batchId,
        status: permanent?.status ?? '',
        code: (permanent?.code ?? '').slice(0, 200),
        message: (permanent?.message ?? '').slice(0, 500),
        minRefused: this.settings.minRefused,
      }),
    );
    if (transition === 'held' || transition === 'resumed') await this.announce(batchId, transition);
    if (transition === 'passed' || transition === 'resumed') {
      // This process's chunks waiting in place for the verdict go at once; the others' at their next look.
      this.waits.poke(batchId);
      await this.options.wake?.(batchId).catch((error: unknown) => {
        this.logger.warn(
          { err: error, batchId },
          'could not wake the chunks that waited for the canary; they go after their rest',
        );
      });
    }
    return decision;
  }

  private async announce(batchId: string, type: 'held' | 'resumed'): Promise<void> {
    try {
      const circuit = await readBatchCircuit(this.redis, this.keys, batchId);
      if (type === 'held')
        this.logger.error(
          { batchId, circuit },
          `batch held: ${circuit.refusedCount} of its canary refused with ${circuit.cause ?? 'one cause'}; other batches go on; a probe follows (bulkorder batch show|release|cancel ${batchId})`,
        );
      else
        this.logger.warn(
          { batchId, circuit },
          'batch resumed: its probe was accepted; its refused orders are sent again',
        );
      const event = await logBatchCircuitEvent(this.redis, this.keys, { type, batchId, circuit });
      await this.options.onEvent?.(event);
    } catch (error) {
      this.logger.error({ err: error, batchId, event: type }, 'the batch circuit event hook failed');
    }
  }
}

/** A refusal of the record's content (4xx but 409, which proves the API judged the record and knows it). */
function isContentRefusal(outcome: ApiOutcome): boolean {
  return outcome.kind === 'permanent' && outcome.status !== 409;
}

function decisionOf(raw: string): CanaryDecision {
  if (raw === 'go' || raw === 'probe' || raw === 'wait' || raw === 'read' || raw === 'cancel') return { kind: raw };
  return { kind: 'answer', outcome: JSON.parse(raw.slice('answer:'.length)) as ApiOutcome };
}
