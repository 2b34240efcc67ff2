/** What a notification is about. */
export type NotifyEventKind =
  | 'batch-settled'
  | 'batch-needs-attention'
  | 'breaker-opened'
  | 'breaker-closed'
  | 'breaker-still-open'
  | 'no-file';

/**
 * The JSON body every webhook receives. `text` makes it readable as a Slack or Teams incoming
 * webhook message. It carries counts, codes and ids only: no secret, no personal data (file
 * names are given without their folder, error messages are left out since APIs echo values).
 */
export interface NotifyEvent {
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
  /** The exit code `import --wait` gives this batch: 0 all delivered, 4 something needs attention. */
  exitCode?: number;
  /** The most frequent error codes of the batch's dead letters and held orders. */
  topErrorCodes?: { code: string; count: number }[];
  /** A link to the batch (or the overview) on the dashboard, when BULKORDER_DASHBOARD_URL is set. */
  dashboardUrl?: string;
  /** Why the breaker tripped, or which schedule found no file. */
  reason?: string;
  schedule?: string;
}
