import { createHash } from 'node:crypto';
import { reasonWithDetails } from '../delivery/errorDetails.js';
import { openAtomicFile, type AtomicFile } from '../files/atomicFile.js';
import { basename, dirname, extname, join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import type { Batch, BatchStore } from '../batches/batchStore.js';
import type { CsvOutputSettings } from '../config.js';
import { csvPreamble, DEFAULT_DIALECT, encodeCsv, outputDialect, type CsvDialect } from '../ingest/csvDialect.js';
import { neutralizeCell } from '../ingest/csvCells.js';
import { ERROR_COLUMNS } from '../ingest/orderFields.js';
import { fieldForName } from '../ingest/resolveColumns.js';
import type { ParkedItem } from './parkedStore.js';
import { originalRows, type RowRebuilder } from '../kinds/originalRows.js';
import { defined } from '../errors.js';

/**
 * The error columns of an export: the rejects file's own (REJECT_COLUMNS, which mark the file as a
 * fix-and-import-again file: an empty orderRef there means the order never had one) plus
 * `reject_status` and `reject_key` (the dead letter's order key: a fixed row imported again, under a new
 * key, closes this dead letter when it is delivered). No field reads them (ERROR_COLUMNS).
 */
const EXPORT_ERROR_COLUMNS = [
  'reject_line',
  'reject_status',
  'reject_codes',
  'reject_reasons',
  'reject_key',
] as const satisfies readonly (typeof ERROR_COLUMNS)[number][];

const RESERVED = new Set<string>(ERROR_COLUMNS);

/** One file written by an export. */
export interface ExportedFile {
  path: string;
  columns: string[];
  deadLetters: number;
  rows: number;
  batches: string[];
  /** Dead letters whose batch columns were unknown, written in our own column names. */
  canonical: boolean;
  /** How it is written: its input's delimiter, encoding and BOM, unless told otherwise. */
  dialect: CsvDialect;
  /**
   * Dead letters without an orderRef: their key is a hash of the order, so a fixed row imports under a
   * new key; its `reject_key` cell links it to the dead letter it replaces.
   */
  withoutOrderRef: string[];
}

export interface ExportOptions {
  /** Where to write; with several column sets, `<stem>-1<ext>`, `<stem>-2<ext>`, ... beside it. */
  outPath: string;
  /**
   * What to write differently from the input's dialect (BULKORDER_OUTPUT_*, `--delimiter`): by default each file
   * speaks the dialect of the input its dead letters came from (the batch keeps it), `,` UTF-8 with BOM for JSON.
   */
  csvOutput?: CsvOutputSettings;
  /** The kind's rows from a payload (RecordKind.rebuildRows): a record whose job left its cells out needs it. */
  rebuild: RowRebuilder | undefined;
}

/**
 * Writes dead letters as CSV in their input's format: the original columns (in the original order,
 * from the batch record), one row per product line, then the error columns, in the input's CSV dialect
 * (delimiter, encoding, BOM) and with CRLF; formula-looking cells neutralised (import strips the apostrophe again).
 * Dead letters of inputs with different columns cannot share a header, so each column set gets a
 * file of its own. Files are written under a temporary name and renamed when complete.
 */
export async function exportDeadLetters(
  items: readonly ParkedItem[],
  batches: BatchStore,
  options: ExportOptions,
): Promise<ExportedFile[]> {
  const batchOf = new Map<string, Batch | undefined>();
  const groups = new Map<
    string,
    {
      columns: string[];
      keep: number[];
      canonical: boolean;
      dialect: CsvDialect;
      entries: { item: ParkedItem; rows: string[][] }[];
    }
  >();
  for (const item of items) {
    const batchId = item.record.batchId;
    if (!batchOf.has(batchId)) batchOf.set(batchId, await batches.get(batchId));
    const batch = batchOf.get(batchId);
    const original = originalRows(item.record, batch?.columns, options.rebuild);
    const keep = original.columns.flatMap((column, i) => (RESERVED.has(column) ? [] : [i]));
    const columns = original.columns.filter((column) => !RESERVED.has(column));
    const id = JSON.stringify(columns);
    let group = groups.get(id);
    // One header, one dialect: the first input of the column set speaks for the file.
    const dialect = outputDialect(batch?.dialect ?? DEFAULT_DIALECT, options.csvOutput);
    if (group === undefined)
      groups.set(id, (group = { columns, keep, canonical: original.canonical, dialect, entries: [] }));
    const rows = original.rows.map((row) => keep.map((i) => row[i] ?? ''));
    group.entries.push({ item, rows: keepTogether(rows, columns, item.record.key) });
  }

  const paths = outputPaths(options.outPath, groups.size);
  const written: ExportedFile[] = [];
  for (const [i, group] of [...groups.values()].entries()) {
    const path = defined(paths[i], 'an output path (one per group)');
    const file = await CsvFile.open(path, group.dialect);
    try {
      await file.write([...group.columns, ...EXPORT_ERROR_COLUMNS], csvPreamble(group.dialect));
      let rows = 0;
      for (const { item, rows: cells } of group.entries) {
        const r = item.record;
        for (const [n, row] of cells.entries()) {
          const line = r.lines[n] ?? r.lines[0] ?? '';
          await file.write([
            ...row,
            String(line),
            r.httpStatus === undefined ? '' : String(r.httpStatus),
            r.code ?? '',
            reasonWithDetails(r.reason, r.body),
            r.key,
          ]);
          rows++;
        }
      }
      await file.close();
      written.push({
        path,
        columns: group.columns,
        deadLetters: group.entries.length,
        rows,
        batches: [...new Set(group.entries.map((e) => e.item.record.batchId))],
        canonical: group.canonical,
        dialect: group.dialect,
        withoutOrderRef: group.entries
          .filter((e) => e.item.record.orderRef === undefined)
          .map((e) => e.item.record.key),
      });
    } catch (error) {
      await file.abort();
      throw error;
    }
  }
  return written;
}

/**
 * An order of several product lines without an orderRef (a JSON order) would come back as one
 * order per row, since rows group by orderRef. Such rows get a synthetic orderRef derived from the
 * order key (`DL-<hash>`), so the order stays whole; it is then a new order key, and the original
 * dead letter stays listed until purged.
 */
function keepTogether(rows: string[][], columns: readonly string[], orderKey: string): string[][] {
  const refColumn = columns.findIndex((column) => fieldForName(column) === 'orderRef');
  if (rows.length < 2 || refColumn < 0 || rows.some((row) => (row[refColumn] ?? '').trim() !== '')) return rows;
  const ref = `DL-${createHash('sha256').update(orderKey).digest('hex').slice(0, 16)}`;
  return rows.map((row) => row.map((cell, i) => (i === refColumn ? ref : cell)));
}

function outputPaths(outPath: string, count: number): string[] {
  if (count <= 1) return [outPath];
  const ext = extname(outPath) || '.csv';
  const stem = join(dirname(outPath), basename(outPath, extname(outPath)));
  return Array.from({ length: count }, (_, i) => `${stem}-${i + 1}${ext}`);
}

/**
 * A CSV file written through src/files/: under `<path>.partial-<pid>` and renamed into place on
 * close; a full disk or a read-only folder is exit 5 naming the path, no half file under its name.
 */
class CsvFile {
  private constructor(
    private readonly file: AtomicFile,
    private readonly dialect: CsvDialect,
  ) {}

  static async open(path: string, dialect: CsvDialect): Promise<CsvFile> {
    const file = await openAtomicFile(path, {
      code: 'EXPORT_WRITE_FAILED',
      then: 'Nothing of this file was written and no dead letter was changed; run the export again once it can be written.',
    });
    return new CsvFile(file, dialect);
  }

  async write(cells: readonly string[], prefix = ''): Promise<void> {
    // csv-stringify quotes a lone LF only when told to, with CRLF record ends (as RejectsWriter does).
    const text =
      prefix +
      stringify([cells.map(neutralizeCell)], {
        delimiter: this.dialect.delimiter,
        record_delimiter: 'windows',
        quoted_match: /[\r\n]/,
      });
    await this.file.write(encodeCsv(text, this.dialect));
  }

  close(): Promise<void> {
    return this.file.commit();
  }

  abort(): Promise<void> {
    return this.file.abort();
  }
}
