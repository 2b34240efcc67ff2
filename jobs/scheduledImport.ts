import type { Job } from 'bullmq';
import type { ImportDeps } from '../src/services.js';
import { runScheduledImport, type ScheduledImportResult } from '../src/schedule/runScheduledImport.js';
import type { ScheduledImportData } from '../src/schedule/scheduledImportJob.js';

/**
 * BullMQ processor of the `schedules` queue: one firing imports what the schedule's source holds
 * now, through the import pipeline it is given (src/schedule/runScheduledImport.ts does the work).
 */
export function createScheduledImportProcessor<P>(pipeline: ImportDeps<P>) {
  return (job: Job<ScheduledImportData, ScheduledImportResult>): Promise<ScheduledImportResult> =>
    runScheduledImport(job.data, { ...pipeline, logger: pipeline.logger.child({ job: job.id }) });
}
