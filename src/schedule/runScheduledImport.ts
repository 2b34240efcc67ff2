import { isBulkorderError } from '../errors.js';
import { importFile } from '../importer/importFile.js';
import type { ImportDeps } from '../services.js';
import type { ScheduledImportData } from './scheduledImportJob.js';
import { resolveSource } from './resolveSource.js';

/** Code of a firing whose source named no file (the export did not come). */
const SOURCE_EMPTY = 'SOURCE_EMPTY';

/** What one firing of a schedule did, per file (the job's return value, kept by BullMQ for a while). */
export interface ScheduledImportResult {
  schedule: string;
  files: (
    | {
        file: string;
        batchId: string;
        enqueued: number;
        skippedDelivered: number;
        skippedQueued: number;
        skippedHeld: number;
        rejected: number;
      }
    | {
        file: string;
        /** The refusal's stable code (SOURCE_EMPTY: the source named no file). */ code: string;
        refused: string;
      }
  )[];
}

/** A firing that found no file: none at all (--allow-empty), or the one SOURCE_EMPTY refusal that says so. */
export function foundNoFile(result: ScheduledImportResult): boolean {
  return result.files.every((f) => 'code' in f && f.code === SOURCE_EMPTY);
}

/**
 * One firing of a schedule: imports every file its source names now, one after the other, exactly
 * as `bulkorder import` would. Running twice (a night that fires twice, a file still there the next
 * night) sends nothing twice: the ledger skips orders delivered or queued before. A file refused as
 * a whole is reported and the others go on; an infrastructure error fails the job, and BullMQ's
 * retry imports again what is left (the ledger skips what was queued).
 */
export async function runScheduledImport<P>(
  data: ScheduledImportData,
  deps: ImportDeps<P>,
): Promise<ScheduledImportResult> {
  const log = deps.logger.child({ schedule: data.schedule, source: data.source });
  const files = await resolveSource(data.source);
  const result: ScheduledImportResult = { schedule: data.schedule, files: [] };
  if (files.length === 0 && data.ingest.allowEmpty !== true) {
    // A night whose export did not come must not look like a quiet success.
    log.error({ code: SOURCE_EMPTY }, 'scheduled import: the source names no file now; nothing imported');
    result.files.push({
      file: data.source,
      code: SOURCE_EMPTY,
      refused:
        'SOURCE_EMPTY: the source names no file now: the export is missing (pass --allow-empty to schedule set if that is expected)',
    });
  } else if (files.length === 0) log.warn('scheduled import: the source names no file now; nothing imported');
  for (const file of files) {
    try {
      const imported = await importFile(file, data.ingest, deps);
      const c = imported.counts;
      result.files.push({
        file,
        batchId: imported.batchId,
        enqueued: c.enqueued,
        skippedDelivered: c.skippedDelivered,
        skippedQueued: c.skippedQueued,
        skippedHeld: c.skippedHeld,
        rejected: c.rejected,
      });
    } catch (error) {
      if (isBulkorderError(error) && (error.exitCode === 2 || error.exitCode === 3)) {
        log.error(
          { file, code: error.code, err: error },
          'scheduled import: file refused as a whole; the other files go on',
        );
        result.files.push({ file, code: error.code, refused: `${error.code}: ${error.message}` });
        continue;
      }
      throw error;
    }
  }
  log.info({ files: result.files }, 'scheduled import done');
  return result;
}
