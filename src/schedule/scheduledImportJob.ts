import type { IngestOptions } from '../ingest/openOrderSource.js';

/** BullMQ queue of scheduled imports: its own, so a long import never waits behind (or delays) deliveries. */
export const SCHEDULES_QUEUE = 'schedules';

/** Job name of every job a schedule produces. */
export const SCHEDULED_IMPORT = 'scheduled-import';

/** The data of a scheduled import (the job scheduler's template): what to import and how to read it. */
export interface ScheduledImportData {
  /** The schedule's name, also the BullMQ job scheduler id. */
  schedule: string;
  /** An absolute file, folder or glob (`*` and `?` in the last segment), resolved when the job runs. */
  source: string;
  /** How the files are read (--format, --delimiter, --encoding, --map as read at `schedule set`). */
  ingest: IngestOptions;
}
