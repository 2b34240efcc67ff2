import type { ApiName, ApiSettings } from '../config.js';
import type { ApiClientDeps } from '../delivery/authorizedPost.js';
import type { Outcome } from '../delivery/classifyOutcome.js';
import type { ResultsCounts, ResultsLayout } from './resultsLayout.js';
import type { PayloadCodec } from '../deliveryJob.js';
import type { DeliverySettings } from '../deliverySettings.js';
import type { ColumnSchema } from '../ingest/columnSchema.js';
import type { IngestOptions, RecordSource } from '../ingest/openRecordSource.js';
import type { RecordWording } from './recordWording.js';

/** The kinds bulkorder delivers; each has one RecordKind (src/kinds/orders.ts, accounts.ts). */
export type RecordKindName = 'orders' | 'accounts';

/** The CLI words in front of a kind's generic commands (RecordKind.cli), for commands that know only the kind's name. */
export function cliOf(kind: RecordKindName): string {
  return kind === 'orders' ? 'bulkorder' : 'bulkorder accounts';
}

/** A kind's API client (RecordKind.connect). */
export interface RecordSender<P> {
  /** Sends one record, once; resolves with the classified answer. */
  send(payload: P, record: { key: string; batchId?: string }): Promise<Outcome>;
}

/**
 * Everything that differs between two kinds of record (orders, employee accounts), in one object.
 * The generic machinery (reading, rejects, import, ledger, worker, dead letters, review, results,
 * status) takes a kind and reads these; nothing else names a kind's queue, keys or words.
 */
export interface RecordKind<P> {
  readonly name: RecordKindName;
  /** What one record is called in messages: `order`, `account`. */
  readonly noun: string;
  /** Its columns, required fields, aliases and synonyms (the --map check uses them). */
  readonly columns: ColumnSchema;
  /** Reads a file as records of this kind (its RecordSchema: units, validation, assembly). */
  openSource(file: string, options: IngestOptions): Promise<RecordSource<P>>;
  /** The API its records are sent to: its target (base URL + client id) scopes the keyspace (redisPrefix(config, api)). */
  readonly api: ApiName;
  /** BullMQ queue and the name of its delivery jobs, each a chunk of records of one batch (src/queues.ts). */
  readonly queueName: string;
  readonly jobName: string;
  /**
   * The kind's keyspace under its target's prefix (`bulkorder:<env>:<id>`): its ledger, batches,
   * dead letters, breaker and queue all live there, so two kinds never mix.
   */
  prefix(environmentPrefix: string): string;
  /** How long its ledger entries and batches are kept. */
  retentionMs(delivery: DeliverySettings): number;
  /** Its results file. */
  readonly results: ResultsLayout<P>;
  /** How reasons and logs of the worker name it. */
  readonly wording: RecordWording;
  /** The CLI words in front of a generic command: `bulkorder` or `bulkorder accounts`. */
  readonly cli: string;
  /**
   * The rows a record's payload rebuilds to, under `columns` (orders: src/kinds/originalRows.ts).
   * A job whose source cells equal these is queued without them (they are most of its bytes);
   * dead-letter show, export and retry rebuild them. Kinds without it keep the cells in every job.
   */
  readonly rebuildRows?: {
    readonly columns: readonly string[];
    rows(payload: P, orderRef: string | undefined): string[][];
  };
  /**
   * Its payload without field names, for chunk jobs (orders: src/ingest/orderShape.ts packPayload). An
   * import packs a payload only when `unpack` gives back exactly the same one; kinds without it keep theirs.
   */
  readonly payloadCodec?: PayloadCodec<P>;
  /**
   * Its API client: the one call that creates a record (POST /orders, POST /accounts), classified,
   * never throwing for an HTTP failure; `key` is the record's stable key (the Idempotency-Key header).
   * `settings` are `requireApi(config, kind.api)`.
   */
  connect(settings: ApiSettings, deps: ApiClientDeps): RecordSender<P>;
  /**
   * Whom a record is for (orders: businessCustomerId; accounts: companyId): the circuit breaker
   * counts a refusal as systemic only across several of them.
   */
  customerOf(payload: P): string;
  /** Lines about outcomes only this kind has in an import report (accounts: how many already existed). */
  reportResults?(results: ResultsCounts): string[];
}
