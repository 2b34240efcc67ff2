/**
 * Every Redis key bulkorder keeps, in one place. All of them live under the target's prefix
 * (`bulkorder:<env>:<id>`, the id a hash of environment, API base URL and client id: src/config.ts
 * `redisPrefix`), because identifiers from one environment are not valid in the other (spec,
 * section 1), an acceptance run must never mark a production order delivered, and a ledger filled
 * against one API must never answer for another. BullMQ uses the same prefix for its queues.
 */
export type ParkedKind = 'dead' | 'held';

export interface Keyspace {
  readonly prefix: string;
  /** The namespace's marker (a hash: dataVersion, createdAt, createdBy; src/ledger/namespaceMarker.ts). */
  readonly meta: string;
  /** Delivery ledger entry of one order key (a hash; outlives job retention). */
  ledger(orderKey: string): string;
  /** A batch record (a hash of facts and counters). */
  batch(batchId: string): string;
  /** All batches, scored by start time. */
  readonly batchIndex: string;
  /** A dead-lettered or held order's full record (JSON). */
  parked(kind: ParkedKind, orderKey: string): string;
  /** Dead letters or held orders, scored by the time they were parked. */
  parkedIndex(kind: ParkedKind): string;
  /** Circuit-breaker state (a hash: closed, open or halfOpen, and why). */
  readonly breaker: string;
  /** Prefix of the breaker's per-second attempt counters (`<this><epoch second>`). */
  readonly breakerBuckets: string;
  /** Prefixes of one failure signature's attempts and distinct orders in the window (sorted sets). */
  readonly breakerFailures: string;
  readonly breakerOrders: string;
  /** Prefix of one failure signature's distinct customers in the window (a sorted set). */
  readonly breakerCustomers: string;
  /** `<signature>|<customer>` pairs a healthy trial of another customer proved about those customers (a set, 1 h). */
  readonly breakerExempt: string;
  /** The last refusal's answer per customer (a hash customer -> JSON status, code, message, body; 1 h). */
  readonly breakerAnswers: string;
  /**
   * The customers a healthy trial of another customer proved refused, with their answers (a hash customer ->
   * JSON, `@closedAt`: when; 1 h): their orders queued before are dead-lettered without being sent.
   */
  readonly breakerRefused: string;
  /** The shared adaptive request rate of every worker (a hash; src/worker/sharedRate.ts). */
  readonly rate: string;
  /** Prefix of the shared rate's per-second request counters. */
  readonly rateBuckets: string;
  /** Orders whose refusals opened the breaker: requeued when it closes. */
  readonly breakerBurst: string;
  /** Who paused the queue with `bulkorder pause` (JSON); the breaker never resumes while it exists. */
  readonly pausedBy: string;
  /** Live workers: a sorted set of worker ids scored by last heartbeat, and their facts (hash id -> JSON). */
  readonly workers: string;
  readonly workerInfo: string;
  /** A drop-folder file claimed into processing/ (`bulkorder watch`): its batches, so a restart resumes them. */
  watchClaim(claimName: string): string;
  /** BullMQ's hash of one job (its layout: `<prefix>:<queue>:<jobId>`). */
  job(queueName: string, jobId: string): string;
  /** Order keys reserved with their job kept in the ledger, not yet known to be in BullMQ (scored by reservation time). */
  readonly unqueued: string;
  /** Their kept jobs (a hash: order key -> {name, data} JSON), apart from the ledger entries so those stay small. */
  readonly unqueuedJobs: string;
  /** Batches whose importer is reading their file (a set). */
  readonly importing: string;
  /** Present while a batch's importer is alive (renewed by its heartbeat, PX). */
  batchOwner(batchId: string): string;
  /** Outcome counts and latency buckets of one minute (epoch minute), for the dashboard's chart; kept 25 h. */
  statsMinute(minute: number): string;
  /** When notifications start counting (ms, SET NX; kept alive by running notifiers): older events are never sent. */
  readonly notifyFrom: string;
  /** One notification's claim (SET NX): whoever sets it sends that event, once across every worker. */
  notifySent(eventId: string): string;
  /** The breaker episode announced as opened (its `since`), until its breaker-closed is sent. */
  readonly notifyBreakerEpisode: string;
  /** When the Redis guard of some worker first found Redis unsafe (ms, SET NX), until its redis-safe is sent. */
  readonly notifyRedisEpisode: string;
}

export function keyspace(prefix: string): Keyspace {
  return {
    prefix,
    meta: `${prefix}:meta`,
    ledger: (orderKey) => `${prefix}:ledger:${orderKey}`,
    batch: (batchId) => `${prefix}:batch:${batchId}`,
    batchIndex: `${prefix}:batches`,
    parked: (kind, orderKey) => `${prefix}:${kind}:${orderKey}`,
    parkedIndex: (kind) => `${prefix}:${kind}-index`,
    breaker: `${prefix}:breaker:state`,
    breakerBuckets: `${prefix}:breaker:n:`,
    breakerFailures: `${prefix}:breaker:fail:`,
    breakerOrders: `${prefix}:breaker:orders:`,
    breakerCustomers: `${prefix}:breaker:customers:`,
    breakerExempt: `${prefix}:breaker:exempt`,
    breakerAnswers: `${prefix}:breaker:answers`,
    breakerRefused: `${prefix}:breaker:refused`,
    rate: `${prefix}:rate`,
    rateBuckets: `${prefix}:rate:n:`,
    breakerBurst: `${prefix}:breaker:burst`,
    pausedBy: `${prefix}:paused-by`,
    workers: `${prefix}:workers`,
    workerInfo: `${prefix}:workers:info`,
    watchClaim: (claimName) => `${prefix}:watch:claim:${claimName}`,
    job: (queueName, jobId) => `${prefix}:${queueName}:${jobId}`,
    unqueued: `${prefix}:unqueued`,
    unqueuedJobs: `${prefix}:unqueued-jobs`,
    importing: `${prefix}:importing`,
    batchOwner: (batchId) => `${prefix}:batch-owner:${batchId}`,
    statsMinute: (minute) => `${prefix}:stats:${minute}`,
    notifyFrom: `${prefix}:notify:from`,
    notifySent: (eventId) => `${prefix}:notify:sent:${eventId}`,
    notifyBreakerEpisode: `${prefix}:notify:breaker-episode`,
    notifyRedisEpisode: `${prefix}:notify:redis-episode`,
  };
}

/**
 * `prefix:part`, kept inside the prefix's hash tag when it has one (`{bulkorder:env}` gives
 * `{bulkorder:env:part}`): on a Redis Cluster each kind then gets a slot of its own, so separate
 * kinds (and environments) spread over the nodes while each one's keys stay in one slot.
 */
export function subPrefix(prefix: string, part: string): string {
  return prefix.startsWith('{') && prefix.endsWith('}') ? `${prefix.slice(0, -1)}:${part}}` : `${prefix}:${part}`;
}
