import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { CsvOutputSettings } from '../config.js';
import { writeFailure } from '../files/writeFailure.js';
import type { IngestOptions } from '../ingest/openRecordSource.js';
import { outputPath } from '../ingest/outputPath.js';
import type { ResultsKind } from '../kinds/resultsLayout.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Logger } from '../logger.js';
import { isSettled, type BatchStore } from './batchStore.js';
import { writeResults } from './writeResults.js';

/**
 * The trail of an import that has no folder of its own (a dashboard upload, a scheduled import):
 * the input as it was imported, its rejects and its results, side by side under the results folder
 * (BULKORDER_RESULTS_DIR), where they stay valid whatever happens to the spool or the source.
 */
export interface Trail {
  /** The input as imported: `<resultsDir>/<place>/<UTC time>-<random>.<name>`. */
  input: string;
  /** `<input>.rejects.csv`, written by the import when a row is rejected. */
  rejects: string;
  /** `<input>.results.csv`, written once the batch settles (writeDueResults). */
  results: string;
}

/**
 * Where a trail goes: `place` is `uploads` or `schedules/<name>`; the name is the input's own, after
 * a sortable UTC time and a random part, so a file imported again never overwrites an earlier trail.
 */
export function trailPaths(resultsDir: string, place: string, name: string, now = new Date()): Trail {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const input = resolve(join(resultsDir, place, `${stamp}-${randomBytes(3).toString('hex')}.${basename(name)}`));
  return { input, rejects: outputPath(input, 'rejects'), results: outputPath(input, 'results') };
}

/**
 * Puts an input into its trail: `move` takes the file (the upload spool's copy), `copy` leaves the
 * source where it is (a schedule's export folder is not ours) and copies it, as a reflink where the
 * file system has them. A folder that cannot be written (full, read-only) is exit 5, naming it (src/files/).
 */
export async function placeInTrail(from: string, trail: Trail, how: 'move' | 'copy'): Promise<void> {
  const folder = dirname(trail.input);
  const fail = (error: unknown) =>
    writeFailure(folder, error, {
      code: 'TRAIL_WRITE_FAILED',
      then: 'Nothing was imported: set BULKORDER_RESULTS_DIR to a folder this process can write (and with space), or make this one writable.',
    });
  try {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    if (how === 'copy') {
      await copyFile(from, trail.input, constants.COPYFILE_FICLONE);
      return;
    }
    try {
      await rename(from, trail.input);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      // Another file system (the spool under /tmp): copy, then drop the spool's copy.
      await copyFile(from, trail.input);
      await rm(from, { force: true });
    }
  } catch (error) {
    await rm(trail.input, { force: true }).catch(() => undefined);
    throw fail(error);
  }
}

/** What writing due results needs: one kind's batches, ledger and reader. */
export interface ResultsDueDeps<P> {
  batches: BatchStore;
  ledger: Ledger;
  kind: ResultsKind<P>;
  /** BULKORDER_OUTPUT_*: how results depart from the input's CSV dialect. */
  csvOutput?: CsvOutputSettings;
  logger: Logger;
}

/** A results file to write once its batch settles: the input to read again, how, and where the results go. */
interface DueResults {
  input: string;
  results: string;
  ingest: IngestOptions;
}

/** How long one process may write a due results file before another may try (a million rows take about a minute). */
const WRITE_LOCK_MS = 10 * 60 * 1000;

/**
 * Records that a batch's results file is due: `status` and the batch's page say where it will be,
 * and writeDueResults writes it once the batch settles, in whichever process (a worker, the
 * dashboard) can read the input.
 */
export async function expectResults(batches: BatchStore, batchId: string, due: DueResults): Promise<void> {
  await batches.expectResults(batchId, due.results, JSON.stringify(due));
}

/**
 * Writes the results file of every due batch that has settled and whose input this host can read
 * (another host's upload is left to that host), then records it on the batch. A batch that is gone,
 * or whose import failed, is dropped from the list. Returns the batches written.
 */
async function writeDueResults<P>(deps: ResultsDueDeps<P>): Promise<string[]> {
  const written: string[] = [];
  for (const [batchId, json] of Object.entries(await deps.batches.dueResults())) {
    const batch = await deps.batches.get(batchId);
    if (batch === undefined || batch.importState === 'failed') {
      await deps.batches.settleResults(batchId);
      continue;
    }
    if (!isSettled(batch)) continue;
    const due = JSON.parse(json) as DueResults;
    if (!(await readable(due.input))) continue;
    if (!(await deps.batches.claimResults(batchId, WRITE_LOCK_MS))) continue;
    try {
      await writeResults(
        { file: due.input, ingest: due.ingest, batchId, ledger: deps.ledger, outPath: due.results, kind: deps.kind },
        {
          ...(deps.csvOutput === undefined ? {} : { csvOutput: deps.csvOutput }),
        },
      );
      await deps.batches.settleResults(batchId, due.results);
      written.push(batchId);
      deps.logger.info({ batchId, results: due.results }, 'results file written');
    } catch (error) {
      deps.logger.warn({ batchId, results: due.results, err: error }, 'could not write a results file; trying again');
    } finally {
      await deps.batches.releaseResults(batchId);
    }
  }
  return written;
}

/**
 * Runs writeDueResults every `everyMs` (default 5 s) until stopped: workers and the dashboard do,
 * so a results file is written within seconds of its batch settling. Redis away: tried again later.
 */
export function startResultsWriter<P>(deps: ResultsDueDeps<P>, everyMs = 5000): { stop(): Promise<void> } {
  let pass: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (pass !== undefined) return; // a long file still being written: the next tick looks again
    pass = writeDueResults(deps)
      .then(() => undefined)
      .catch((error: unknown) => deps.logger.debug({ err: error }, 'results writer: Redis unavailable; trying again'))
      .finally(() => (pass = undefined));
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await pass;
    },
  };
}

async function readable(path: string): Promise<boolean> {
  return access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
}
