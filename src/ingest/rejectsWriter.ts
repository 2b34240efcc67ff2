import { outputPath } from './outputPath.js';
import { open, rm, stat } from 'node:fs/promises';
import { openAtomicFile, type AtomicFile } from '../files/atomicFile.js';
import { stringify } from 'csv-stringify/sync';
import { neutralizeCell } from './csvCells.js';
import { REJECT_COLUMNS } from './orderFields.js';
import { csvPreamble, DEFAULT_DIALECT, encodeCsv, type CsvDialect } from './csvDialect.js';
import type { RejectedRecord } from './types.js';
import { defined } from '../errors.js';

/** Options for a RejectsWriter. */
export interface RejectsWriterOptions {
  /**
   * Delimiter, encoding and BOM; default `,` UTF-8 with BOM. Pass the input's (inputDialect, with the
   * operator's BULKORDER_OUTPUT_* through outputDialect) so the file opens like the input did.
   */
  dialect?: CsvDialect;
}

/**
 * Writes `<name>.rejects.csv`: the original columns of every rejected row, then `reject_line`,
 * `reject_codes` and `reject_reasons`. In the input's dialect (a `;` file with a BOM gets `;` and a
 * BOM; windows-1252 stays windows-1252) and with CRLF, so the spreadsheet that made it opens it;
 * cells that start with = + - @ tab or CR get a leading apostrophe so a spreadsheet does not run
 * them as formulas (ingest strips that apostrophe again). Fixed rows can be imported again as
 * they are: the reject_* columns are ignored on import.
 *
 * The file is written under a temporary name and renamed on close, so a crash never leaves a
 * half file under the real name. With no rejects nothing is written, and a stale rejects file
 * from an earlier run at the same path is removed.
 */
export class RejectsWriter {
  readonly path: string;
  /** Data rows written so far. */
  rowsWritten = 0;
  /** Rejected orders (or lone records) written so far. */
  ordersWritten = 0;
  private readonly columns: readonly string[];
  private readonly dialect: CsvDialect;
  /** The file, once the first rejected row opened it (through src/files/: atomic, a full disk is exit 5). */
  private output: AtomicFile | undefined;
  private closed = false;

  constructor(path: string, columns: readonly string[], options: RejectsWriterOptions = {}) {
    this.path = path;
    this.dialect = options.dialect ?? { ...DEFAULT_DIALECT };
    // A fixed rejects file imported again may be rejected again: never repeat our own columns.
    const reserved = new Set<string>(REJECT_COLUMNS);
    this.columns = columns.filter((column) => !reserved.has(column));
  }

  /** `orders.csv` -> `orders.csv.rejects.csv`, beside the input (see outputPath). */
  static defaultPath(file: string): string {
    return outputPath(file, 'rejects');
  }

  /** Appends every row of one rejected order, each with the errors of its own line. */
  async write(order: RejectedRecord): Promise<void> {
    if (this.closed) throw new Error('RejectsWriter is closed');
    if (this.output === undefined) {
      // Opened at the first rejected row only: a file without rejects never touches the folder. A
      // device or pipe (/dev/stdout) is written directly: renaming onto it would replace it.
      this.output = await openAtomicFile(this.path, {
        code: 'REJECTS_WRITE_FAILED',
        then: 'Orders of this file before the failure may be queued; run the same import again once it can be written (what was queued is not sent twice).',
      });
      await this.put(csvPreamble(this.dialect) + this.format([...this.columns, ...REJECT_COLUMNS]));
    }
    const badLines = [...new Set(order.errors.map((e) => e.line))];
    for (const [i, row] of order.rows.entries()) {
      const line = order.rowLines[i] ?? order.lines[0] ?? 0;
      const errors = order.errors.filter((e) => e.line === line);
      const codes = errors.length > 0 ? [...new Set(errors.map((e) => e.code))] : ['ORDER_NOT_SENT'];
      const reasons =
        errors.length > 0
          ? errors.map((e) => e.message)
          : [
              `not sent because line${badLines.length === 1 ? '' : 's'} ${badLines.join(', ')} of this order ${badLines.length === 1 ? 'has' : 'have'} errors${order.orderRef === undefined ? '' : ` (orderRef '${order.orderRef}')`}.`,
            ];
      const cells = [
        ...this.columns.map((column) => row[column] ?? ''),
        String(line),
        codes.join(' '),
        reasons.join(' | '),
      ];
      await this.put(this.format(cells.map(neutralizeCell)));
      this.rowsWritten++;
    }
    this.ordersWritten++;
  }

  /** Finishes the file (or removes a stale one when nothing was rejected). Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.output === undefined) {
      await removeIfOurs(this.path);
      return;
    }
    await this.output.commit();
  }

  /** Drops the partial file without replacing the real one (for a run that failed). */
  async abort(): Promise<void> {
    this.closed = true;
    await this.output?.abort();
  }

  private format(cells: readonly string[]): string {
    // csv-stringify quotes a value with a lone LF only if told to, when records end with CRLF.
    return stringify([cells], {
      delimiter: this.dialect.delimiter,
      record_delimiter: 'windows',
      quoted_match: /[\r\n]/,
    });
  }

  private async put(text: string): Promise<void> {
    await defined(this.output, 'the rejects file (opened before the first put)').write(encodeCsv(text, this.dialect));
  }
}

async function removeIfOurs(path: string): Promise<void> {
  // Only a regular file can be a stale rejects file (a pipe would block the read, a device is nobody's).
  if ((await stat(path).catch(() => undefined))?.isFile() !== true) return;
  let head: string;
  try {
    const handle = await open(path, 'r');
    try {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      head = buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return; // nothing there
  }
  const firstLine = head.split(/\r?\n/, 1)[0] ?? '';
  if (REJECT_COLUMNS.every((column) => firstLine.includes(column))) await rm(path, { force: true });
}
