import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { expectResults, placeInTrail, trailPaths } from '../batches/resultsTrail.js';
import { isBulkorderError, type BulkorderError } from '../errors.js';
import { importFile } from '../importer/importFile.js';
import type { ImportDeps } from '../services.js';
import type { ScheduledImportData } from './scheduledImportJob.js';
import { resolveSource } from './resolveSource.js';

/** Code of a firing whose source named no file (the export did not come). */
const SOURCE_EMPTY = 'SOURCE_EMPTY';

/** One file a firing imported: its batch, what was queued and skipped, and its trail. */
export interface ScheduledFileImported {
  /** The file the source named. */
  file: string;
  batchId: string;
  enqueued: number;
  skippedDelivered: number;
  skippedQueued: number;
  skippedHeld: number;
  /** Records (orders) rejected: their rows are in `rejectsFile`. */
  rejected: number;
  /** Orders not sent because their orderRef was delivered, held or in flight with other content (ORDER_REF_REUSED). */
  conflicts?: number;
  /** The copy of the file the batch imported, under BULKORDER_RESULTS_DIR (`schedules/<name>/`). */
  imported?: string;
  /** The rejected rows (also ORDER_REF_REUSED), when there were any. */
  rejectsFile?: string;
  /** Where the results are written once the batch settles (the batch names it then: `status`). */
  resultsFile?: string;
}

/** What one firing of a schedule did, per file (the job's return value, kept by BullMQ for a while). */
export interface ScheduledImportResult {
  schedule: string;
  files: (
    | ScheduledFileImported
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
 * as `bulkorder import` would. Each file is first copied into its trail under the results folder
 * (`<BULKORDER_RESULTS_DIR>/schedules/<name>/`): the batch imports that copy, its rejects go beside
 * it, and its results file is written there once the batch settles (src/batches/resultsTrail.ts),
 * whatever becomes of the source by then. Running twice (a night that fires twice, a file still there the next
 * night) sends nothing twice: the ledger skips orders delivered or queued before. A file refused as
 * a whole is reported and the others go on; an infrastructure error fails the job, and BullMQ's
 * retry imports again what is left (the ledger skips what was queued).
 */
export async function runScheduledImport<P>(
  data: ScheduledImportData,
  deps: ImportDeps<P> & {
    /** Why the source may not be imported now (inside another target's drop folder), looked at every firing. */
    sourceRefusal?(source: string): Promise<BulkorderError | undefined>;
  },
): Promise<ScheduledImportResult> {
  const log = deps.logger.child({ schedule: data.schedule, source: data.source });
  const refusal = await deps.sourceRefusal?.(data.source);
  if (refusal !== undefined) {
    log.error({ code: refusal.code }, `scheduled import refused: ${refusal.message}`);
    return {
      schedule: data.schedule,
      files: [{ file: data.source, code: refusal.code, refused: `${refusal.code}: ${refusal.message}` }],
    };
  }
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
    const trail =
      deps.resultsDir === undefined
        ? undefined
        : trailPaths(deps.resultsDir, join('schedules', data.schedule), basename(file));
    try {
      if (trail !== undefined) await placeInTrail(file, trail, 'copy');
      const imported = await importFile(
        trail?.input ?? file,
        { ...data.ingest, ...(trail === undefined ? {} : { rejectsPath: trail.rejects }) },
        deps,
      );
      if (trail !== undefined)
        await expectResults(deps.batches, imported.batchId, {
          input: trail.input,
          results: trail.results,
          ingest: data.ingest,
        });
      const c = imported.counts;
      result.files.push({
        file,
        batchId: imported.batchId,
        enqueued: c.enqueued,
        skippedDelivered: c.skippedDelivered,
        skippedQueued: c.skippedQueued,
        skippedHeld: c.skippedHeld,
        rejected: c.rejected,
        conflicts: c.conflicts,
        ...(trail === undefined ? {} : { imported: trail.input, resultsFile: trail.results }),
        ...(imported.rejectsPath === undefined ? {} : { rejectsFile: imported.rejectsPath }),
      });
    } catch (error) {
      if (trail !== undefined) await rm(trail.input, { force: true }).catch(() => undefined);
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
