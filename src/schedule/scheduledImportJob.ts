import type { IngestOptions } from '../ingest/openOrderSource.js';

// Queue and job names live in src/queues.ts; re-exported for the schedule's callers.
export { SCHEDULES_QUEUE, SCHEDULED_IMPORT } from '../queues.js';

/** The data of a scheduled import (the job scheduler's template): what to import and how to read it. */
export interface ScheduledImportData {
  /** The schedule's name, also the BullMQ job scheduler id. */
  schedule: string;
  /** An absolute file, folder or glob (`*` and `?` in the last segment), resolved when the job runs. */
  source: string;
  /** How the files are read (--format, --delimiter, --encoding, --map as read at `schedule set`). */
  ingest: IngestOptions;
}
