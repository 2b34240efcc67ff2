import type { Job } from 'bullmq';
import type { ImportDeps } from '../src/services.js';
import { runScheduledImport, type ScheduledImportResult } from '../src/schedule/runScheduledImport.js';
import type { ScheduledImportData } from '../src/schedule/scheduledImportJob.js';
import type { BulkorderError } from '../src/errors.js';

/**
 * BullMQ processor of the `schedules` queue: one firing imports what the schedule's source holds
 * now, through the import pipeline it is given (src/schedule/runScheduledImport.ts does the work),
 * unless `sourceRefusal` refuses the source (it lies in the drop folder of another target).
 */
export function createScheduledImportProcessor<P>(
  pipeline: ImportDeps<P>,
  sourceRefusal: (source: string) => Promise<BulkorderError | undefined>,
) {
  return (job: Job<ScheduledImportData, ScheduledImportResult>): Promise<ScheduledImportResult> =>
    runScheduledImport(job.data, { ...pipeline, logger: pipeline.logger.child({ job: job.id }), sourceRefusal });
}
