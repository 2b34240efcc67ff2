/** What a notification is about. */
export type NotifyEventKind =
  | 'batch-settled'
  | 'batch-needs-attention'
  | 'batch-recovered'
  | 'batch-resolved'
  | 'file-refused'
  | 'import-failed'
  | 'breaker-opened'
  | 'breaker-closed'
  | 'breaker-still-open'
  | 'no-file'
  | 'redis-unsafe'
  | 'redis-safe'
  | 'batch-held'
  | 'batch-resumed'
  | 'batch-cancelled'
  | 'batch-released';

/**
 * The JSON body every generic webhook receives (Slack and Teams get their own shapes built from
 * it: webhookPayload.ts). It carries counts, codes and ids only: no secret, no personal data (file
 * names are given without their folder, the API's error messages are left out since APIs echo values).
 */
export interface NotifyEvent {
  /** Stable across workers and restarts (`<kind>:<batch or breaker episode>`): receivers may dedupe on it. */
  id: string;
  event: NotifyEventKind;
  /** `acceptance` or `production`. */
  env: string;
  /** One or two lines for a person. */
  text: string;
  /** ISO time of the event. */
  at: string;
  batchId?: string;
  /** The input file's name (no folder). */
  file?: string;
  counts?: Record<string, number>;
  /** The exit code `import --wait` gives this batch: 0 all delivered, 3 file refused, 4 something needs attention. */
  exitCode?: number;
  /** The most frequent error codes of the batch's dead letters and held orders. */
  topErrorCodes?: { code: string; count: number }[];
  /** A link to the batch (or the overview) on the dashboard, when BULKORDER_DASHBOARD_URL is set. */
  dashboardUrl?: string;
  /** Why the breaker tripped, why a file was refused, why Redis is unsafe, or which schedule found no file. */
  reason?: string;
  /** A refused file's, a tripped breaker's or an unsafe Redis's stable code (REDIS_EVICTION_POLICY, ...). */
  code?: string;
  schedule?: string;
  /** Breaker events: the record kind (`orders`, `accounts`), the next trial, what waits, who closed it. */
  kind?: string;
  nextTrialAt?: string;
  waiting?: { jobs: number; burst: number };
  closedBy?: string;
  /** Batch circuit events: a few of the refused orders (keys only), and what a person may do (or what was done). */
  samples?: string[];
  action?: string;
  /**
   * The id of the earlier event this one closes (`batch-needs-attention:<batch>`, `batch-held:<batch>:<at>`):
   * what a person was alerted to needs nothing more. A receiver resolves that alert; each is sent once.
   */
  resolves?: string;
}
