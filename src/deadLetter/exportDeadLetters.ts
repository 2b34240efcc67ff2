import { createHash } from 'node:crypto';
import { reasonWithDetails } from '../delivery/errorDetails.js';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import type { BatchStore } from '../batches/batchStore.js';
import { neutralizeCell } from '../ingest/csvCells.js';
import { ERROR_COLUMNS } from '../ingest/orderFields.js';
import { fieldForName } from '../ingest/resolveColumns.js';
import type { ParkedItem } from './parkedStore.js';
import { originalRows, type RowRebuilder } from '../kinds/originalRows.js';

/**
 * The error columns of an export: the rejects file's own (REJECT_COLUMNS, which mark the file as a
 * fix-and-import-again file: an empty orderRef there means the order never had one) plus
 * `reject_status`. Ingest ignores all of them (ERROR_COLUMNS).
 */
const EXPORT_ERROR_COLUMNS = [
  'reject_line',
  'reject_status',
  'reject_codes',
  'reject_reasons',
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
  /**
   * Dead letters without an orderRef: their key is a hash of the order, so a fixed row imports as
   * a new order and the original dead letter stays listed until purged.
   */
  withoutOrderRef: string[];
}

export interface ExportOptions {
  /** Where to write; with several column sets, `<stem>-1<ext>`, `<stem>-2<ext>`, ... beside it. */
  outPath: string;
  /** Cell delimiter; default `,` (import detects `,` `;` and tab). */
  delimiter?: string;
  /** The kind's rows from a payload (RecordKind.rebuildRows): a record whose job left its cells out needs it. */
  rebuild: RowRebuilder | undefined;
}

/**
 * Writes dead letters as CSV in their input's format: the original columns (in the original order,
 * from the batch record), one row per product line, then the error columns. UTF-8 with BOM and
 * CRLF for spreadsheets; formula-looking cells neutralised (import strips the apostrophe again).
 * Dead letters of inputs with different columns cannot share a header, so each column set gets a
 * file of its own. Files are written under a temporary name and renamed when complete.
 */
export async function exportDeadLetters(
  items: readonly ParkedItem[],
  batches: BatchStore,
  options: ExportOptions,
): Promise<ExportedFile[]> {
  const columnsOf = new Map<string, string[] | undefined>();
  const groups = new Map<
    string,
    { columns: string[]; keep: number[]; canonical: boolean; entries: { item: ParkedItem; rows: string[][] }[] }
  >();
  for (const item of items) {
    const batchId = item.record.batchId;
    if (!columnsOf.has(batchId)) columnsOf.set(batchId, (await batches.get(batchId))?.columns);
    const original = originalRows(item.record, columnsOf.get(batchId), options.rebuild);
    const keep = original.columns.flatMap((column, i) => (RESERVED.has(column) ? [] : [i]));
    const columns = keep.map((i) => original.columns[i]!);
    const id = JSON.stringify(columns);
    let group = groups.get(id);
    if (group === undefined) groups.set(id, (group = { columns, keep, canonical: original.canonical, entries: [] }));
    const rows = original.rows.map((row) => keep.map((i) => row[i] ?? ''));
    group.entries.push({ item, rows: keepTogether(rows, columns, item.record.key) });
  }

  const paths = outputPaths(options.outPath, groups.size);
  const written: ExportedFile[] = [];
  for (const [i, group] of [...groups.values()].entries()) {
    const path = paths[i]!;
    const file = new CsvFile(path, options.delimiter ?? ',');
    try {
      await file.write([...group.columns, ...EXPORT_ERROR_COLUMNS], '\uFEFF');
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

/** A CSV file written under `<path>.partial-<pid>` and renamed into place on close. */
class CsvFile {
  private readonly partial: string;
  private readonly stream: WriteStream;

  constructor(
    readonly path: string,
    private readonly delimiter: string,
  ) {
    this.partial = `${path}.partial-${process.pid}`;
    this.stream = createWriteStream(this.partial, { encoding: 'utf8' });
  }

  async write(cells: readonly string[], prefix = ''): Promise<void> {
    // csv-stringify quotes a lone LF only when told to, with CRLF record ends (as RejectsWriter does).
    const text =
      prefix +
      stringify([cells.map(neutralizeCell)], {
        delimiter: this.delimiter,
        record_delimiter: 'windows',
        quoted_match: /[\r\n]/,
      });
    if (!this.stream.write(text)) await new Promise<void>((resolve) => this.stream.once('drain', resolve));
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) =>
      this.stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    await rename(this.partial, this.path);
  }

  async abort(): Promise<void> {
    this.stream.destroy();
    await rm(this.partial, { force: true });
  }
}
