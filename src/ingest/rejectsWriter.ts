import { outputPath } from './outputPath.js';
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { atomicOutput, type AtomicOutput } from './atomicOutput.js';
import { stringify } from 'csv-stringify/sync';
import { neutralizeCell } from './csvCells.js';
import { outputFileError, type BulkorderError } from '../errors.js';
import { REJECT_COLUMNS } from './orderFields.js';
import type { RejectedRecord } from './types.js';

/** Options for a RejectsWriter. */
export interface RejectsWriterOptions {
  /** Cell delimiter; default `,`. Pass the input's (source.delimiter) so Excel opens it like the input. */
  delimiter?: string;
}

/**
 * Writes `<name>.rejects.csv`: the original columns of every rejected row, then `reject_line`,
 * `reject_codes` and `reject_reasons`. UTF-8 with BOM and CRLF so Excel opens it correctly;
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
  private readonly delimiter: string;
  private output: AtomicOutput | undefined;
  private stream: WriteStream | undefined;
  /** Rejects with `error` once the stream fails; every wait races it. */
  private failed: Promise<never> | undefined;
  private error: BulkorderError | undefined;
  private closed = false;

  constructor(path: string, columns: readonly string[], options: RejectsWriterOptions = {}) {
    this.path = path;
    this.delimiter = options.delimiter ?? ',';
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
    if (this.stream === undefined) {
      // Opened at the first rejected row only: a file without rejects never touches the folder. A
      // device or pipe (/dev/stdout) is written directly: renaming onto it would replace it.
      this.output = await atomicOutput(this.path);
      const stream = createWriteStream(this.output.writePath, { encoding: 'utf8' });
      this.stream = stream;
      this.failed = new Promise<never>((_, reject) => {
        // A read-only folder or a full disk: an 'error' without a listener would end the process with a stack trace.
        stream.once('error', (error) => {
          this.error = outputFileError(
            'REJECTS_WRITE_FAILED',
            this.path,
            error,
            'Orders of this file before the failure may be queued; run the same import again once it can be written (what was queued is not sent twice).',
          );
          reject(this.error);
        });
      });
      this.failed.catch(() => undefined);
      await this.put('\uFEFF' + this.format([...this.columns, ...REJECT_COLUMNS]));
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
    if (this.stream === undefined) {
      await removeIfOurs(this.path);
      return;
    }
    const stream = this.stream;
    try {
      await Promise.race([new Promise<void>((resolve) => stream.end(() => resolve())), this.failed]);
      if (this.error !== undefined) throw this.error;
      await this.output?.commit();
    } catch (error) {
      await this.output?.discard();
      throw this.error ?? error;
    }
  }

  /** Drops the partial file without replacing the real one (for a run that failed). */
  async abort(): Promise<void> {
    this.closed = true;
    this.stream?.destroy();
    await this.output?.discard();
  }

  private format(cells: readonly string[]): string {
    // csv-stringify quotes a value with a lone LF only if told to, when records end with CRLF.
    return stringify([cells], { delimiter: this.delimiter, record_delimiter: 'windows', quoted_match: /[\r\n]/ });
  }

  private async put(text: string): Promise<void> {
    if (this.error !== undefined) throw this.error;
    const stream = this.stream!;
    if (!stream.write(text))
      await Promise.race([new Promise<void>((resolve) => stream.once('drain', resolve)), this.failed]);
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
