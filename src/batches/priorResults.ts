import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { parse } from 'csv-parse';
import { UsageError } from '../errors.js';
import type { ResultsLayout } from '../kinds/resultsLayout.js';

/** One record an earlier results file names as delivered: what its row said, carried into the next results file. */
export interface PriorDelivery {
  batch: string;
  remoteId: string;
  httpStatus: string;
  attempts: string;
}

/**
 * The results file of an earlier run, read as a second ledger (issue 26): the records it names as
 * delivered are not sent again while the Redis ledger does not know them (it forgot, or their
 * entries expired), and the next results file names them again.
 */
export interface PriorResults {
  path: string;
  /** When the file was last written (ms). */
  writtenAt: number;
  /** Rows read (every record of the file it describes). */
  rows: number;
  /** sha256 of its bytes: the import journal names the results file its target's run wrote by it. */
  sha256: string;
  /** Delivered records (outcome `delivered` or `already-delivered`) by key. */
  delivered: Map<string, PriorDelivery>;
}

/** Outcomes of a results row that mean the service has the record. */
const DELIVERED_OUTCOMES = new Set(['delivered', 'already-delivered']);

/** The message of a row carried over from an earlier results file (the report says the same). */
export const DELIVERED_BY_RESULTS = 'already delivered (results file)';

/**
 * Reads `path` if it exists; undefined when it does not. A file without the layout's key and
 * outcome columns is not a results file of this kind: refused (exit 2) rather than guessed at.
 * Memory: one small entry per delivered record (a file of 100,000 orders: ~20 MB).
 */
export async function readPriorResults(
  path: string,
  layout: Pick<ResultsLayout<unknown>, 'keyColumn' | 'remoteIdColumn'>,
): Promise<PriorResults | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || !info.isFile()) return undefined;
  const delivered = new Map<string, PriorDelivery>();
  let rows = 0;
  const hash = createHash('sha256');
  const bytes = createReadStream(path);
  bytes.on('data', (chunk) => hash.update(chunk));
  const parser = bytes.pipe(parse({ bom: true, columns: true, relax_column_count: true }));
  try {
    for await (const row of parser as AsyncIterable<Record<string, string | undefined>>) {
      if (rows === 0 && (row[layout.keyColumn] === undefined || row.outcome === undefined)) {
        throw new UsageError(
          'RESULTS_FILE_UNREADABLE',
          `${path} is not a results file of this kind (no ${layout.keyColumn} and outcome columns); move it away or name another --results`,
          { details: { path } },
        );
      }
      rows++;
      const key = row[layout.keyColumn] ?? '';
      if (key === '' || !DELIVERED_OUTCOMES.has(row.outcome ?? '')) continue;
      delivered.set(key, {
        batch: row.batch ?? '',
        remoteId: row[layout.remoteIdColumn] ?? '',
        httpStatus: row.httpStatus ?? '',
        attempts: row.attempts ?? '',
      });
    }
  } catch (error) {
    parser.destroy();
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      'RESULTS_FILE_UNREADABLE',
      `${path} could not be read as a results file (${error instanceof Error ? error.message : String(error)}); move it away or name another --results`,
      { cause: error, details: { path } },
    );
  }
  return { path, writtenAt: info.mtimeMs, rows, sha256: hash.digest('hex'), delivered };
}

/** sha256 of a regular file's bytes (a results file just written, for the import journal); undefined for a device or pipe. */
export async function fileSha256(path: string): Promise<string | undefined> {
  if ((await stat(path).catch(() => undefined))?.isFile() !== true) return undefined;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
