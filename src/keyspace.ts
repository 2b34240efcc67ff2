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
  /**
   * A batch's history of fixes (a list of JSON, newest first): its dead letters and held orders fixed or passed
   * on by a later step. Written by the ledger's scripts, which build this name from `prefix` (moveParked.lua).
   */
  batchFixes(batchId: string): string;
  /**
   * The chunk jobs of a batch a worker put back to rest delayed (a set of job ids; notePutBack-2.lua, kept as long
   * as the batch): what waking the batch promotes (src/batches/putBackChunks.ts), not BullMQ's whole delayed set.
   */
  batchPutBack(batchId: string): string;
  /**
   * Fixed rows' links (a hash: new order key -> the dead letter's key it replaces), written by an import of an
   * exported dead letter and read by the delivered settle (settleOne.lua builds this name from `prefix`).
   */
  readonly supersedes: string;
  /**
   * Delivered orders an earlier attempt may have stored too (POSSIBLE_DUPLICATE), not acknowledged yet: a sorted
   * set of order keys scored by delivery time, and their facts (a hash order key -> JSON batch, at, status, code,
   * message). Written by the delivered settle (settleOne.lua builds these names from `prefix`); src/batches/possibleDuplicates.ts.
   */
  readonly duplicates: string;
  readonly duplicateInfo: string;
  /** Open items a person acknowledged (a hash: item id -> JSON who, why, when; src/open/). */
  readonly openAcks: string;
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
  /** Prefix of one failure signature's distinct batches in the window (a sorted set): a refusal of one batch is the batch's. */
  readonly breakerBatches: string;
  /** One batch's circuit (a hash: canary, flowing, held, released or cancelled, and why; src/worker/batchCanary.ts). */
  batchCircuit(batchId: string): string;
  /** The batch's canary records (a set). */
  batchCanaryGranted(batchId: string): string;
  /** Records of the batch refused while it was judged (a hash: order key -> the refusal's JSON). */
  batchCanaryRefused(batchId: string): string;
  /** Held batches, scored by when they were held. */
  readonly heldBatches: string;
  /** Transitions of batch circuits (held, resumed, cancelled, released) as JSON, scored by when (ms): notifications read them. */
  readonly batchCircuitEvents: string;
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
  /**
   * Claims not settled yet: order keys in state `sending`, scored by claim time (Redis's); claimMany.lua adds
   * (one ZADD per script), settleMany.lua removes (one ZREM per script; settleOverMemory-6.lua one by one; both
   * build this name from `prefix`). A reconciler holds one whose job is gone.
   */
  readonly sending: string;
  /** Their kept jobs (a hash: order key -> {name, data} JSON), apart from the ledger entries so those stay small. */
  readonly unqueuedJobs: string;
  /** Batches whose importer is reading their file (a set). */
  readonly importing: string;
  /**
   * Batches whose results file is still to be written once they settle (a hash: batch id -> JSON of the input,
   * the results path and how the input is read; src/batches/resultsTrail.ts): uploads and scheduled imports.
   */
  readonly resultsDue: string;
  /** Held while one process writes a due results file (SET NX PX), so another does not write it at once. */
  resultsDueLock(batchId: string): string;
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
    batchFixes: (batchId) => `${prefix}:batch-fixes:${batchId}`,
    batchPutBack: (batchId) => `${prefix}:batch-put-back:${batchId}`,
    supersedes: `${prefix}:supersedes`,
    duplicates: `${prefix}:duplicates`,
    duplicateInfo: `${prefix}:duplicate-info`,
    openAcks: `${prefix}:open-acks`,
    parked: (kind, orderKey) => `${prefix}:${kind}:${orderKey}`,
    parkedIndex: (kind) => `${prefix}:${kind}-index`,
    breaker: `${prefix}:breaker:state`,
    breakerBuckets: `${prefix}:breaker:n:`,
    breakerFailures: `${prefix}:breaker:fail:`,
    breakerOrders: `${prefix}:breaker:orders:`,
    breakerCustomers: `${prefix}:breaker:customers:`,
    breakerBatches: `${prefix}:breaker:batches:`,
    batchCircuit: (batchId) => `${prefix}:batch-circuit:${batchId}`,
    batchCanaryGranted: (batchId) => `${prefix}:batch-circuit:${batchId}:granted`,
    batchCanaryRefused: (batchId) => `${prefix}:batch-circuit:${batchId}:refused`,
    heldBatches: `${prefix}:batch-circuit-held`,
    batchCircuitEvents: `${prefix}:batch-circuit-events`,
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
    sending: `${prefix}:sending`,
    unqueuedJobs: `${prefix}:unqueued-jobs`,
    importing: `${prefix}:importing`,
    resultsDue: `${prefix}:results-due`,
    resultsDueLock: (batchId) => `${prefix}:results-due-lock:${batchId}`,
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
