import { type CsvError, parse } from 'csv-parse';
import { FileRefusedError } from '../errors.js';
import { utf8Chunks } from './decodeFile.js';
import type { IngestEncoding } from './types.js';

/** Options for reading CSV records. */
export interface CsvReadOptions {
  delimiter: string;
  /** Default `utf-8`. */
  encoding?: IngestEncoding;
  /** Read size in bytes; default 64 KiB (tests use tiny reads to cross chunk boundaries). */
  chunkBytes?: number;
  /** Longest record, in characters, before the file is refused; default 64 KiB. */
  maxRecordBytes?: number;
  /** The header's physical line: 2 after Excel's `sep=;` line; default 1. */
  fromLine?: number;
}

/** One record: `line` is the physical line it starts on (1-based; the header is line 1). */
export interface CsvRecord {
  kind: 'record';
  line: number;
  values: string[];
}

/** A record csv-parse could read but not accept (wrong number of fields, stray quote). */
export interface CsvBadRecord {
  kind: 'bad';
  line: number;
  code: 'CSV_FIELD_COUNT' | 'CSV_QUOTE';
  message: string;
  values: string[];
}

/** csv-parse's engine (Parser.api): what its Transform stream calls for each chunk and at the end. */
interface CsvEngine {
  parse(
    chunk: Buffer | undefined,
    end: boolean,
    push: (record: string[]) => void,
    close: () => void,
  ): Error | undefined;
  readonly info: { lines: number };
}

/** Errors that spoil only their own record; any other csv-parse error spoils the file. */
const RECORD_LEVEL: Readonly<Record<string, CsvBadRecord['code']>> = {
  CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: 'CSV_FIELD_COUNT',
  CSV_INVALID_CLOSING_QUOTE: 'CSV_QUOTE',
  CSV_INVALID_OPENING_QUOTE: 'CSV_QUOTE',
};

/**
 * Streams the records of a CSV file, header included, with the line each starts on.
 * csv-parse does the parsing (quotes, doubled quotes, line breaks inside quotes; CRLF, LF or
 * CR); a record with the wrong number of fields comes out as a CsvBadRecord so the rest of
 * the file still counts. An unclosed quote or an over-long record refuses the file
 * (FileRefusedError), since everything after it is unreliable.
 */
export async function* readCsvRecords(file: string, options: CsvReadOptions): AsyncGenerator<CsvRecord | CsvBadRecord> {
  for await (const batch of readCsvBatches(file, options)) yield* batch;
}

/** The same records, in batches of a read (64 KiB) each: a loop over them is not a promise per record. */
export async function* readCsvBatches(
  file: string,
  options: CsvReadOptions,
): AsyncGenerator<(CsvRecord | CsvBadRecord)[]> {
  const maxRecordBytes = options.maxRecordBytes ?? 64 * 1024;
  // csv-parse counts each CR and LF inside a quoted field as a line, so a quoted CRLF counts
  // twice; `overcount` undoes that so line numbers match what an editor shows.
  let overcount = 0;
  let lastGoodLine = 0;
  const lineOf = (values: readonly string[], endLine: number): number => {
    let breaks = 0;
    let crlf = 0;
    for (const value of values) {
      if (value.includes('\n') || value.includes('\r')) {
        breaks += count(value, '\n') + count(value, '\r');
        crlf += count(value, '\r\n');
      }
    }
    const start = endLine - overcount - breaks;
    overcount += crlf;
    return start;
  };

  // Records and skipped records go into one queue in parse order; csv-parse runs
  // synchronously inside each parse() call, so the queue holds at most one chunk's records.
  let queue: (CsvRecord | CsvBadRecord)[] = [];
  let fatal: FileRefusedError | undefined;
  let headerLength: number | undefined;
  const parser = parse({
    delimiter: options.delimiter,
    bom: true,
    // Any of the three line endings, even mixed in one file (csv-parse otherwise keeps the first
    // one it sees, and a file glued together from two exports would read as run-on rows).
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: false,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: maxRecordBytes,
    ...(options.fromLine === undefined ? {} : { from_line: options.fromLine }),
  });
  // The parser's own engine, fed directly: csv-parse's Transform stream around it would queue each record
  // through the stream, and an `on_record` hook would copy its counters into a new object for every record.
  // Its live `info.lines` is what that copy held when a record is pushed.
  const engine = (parser as unknown as { api?: CsvEngine }).api;
  if (engine === undefined) throw new Error('csv-parse: no parser engine (api) on the Parser; check its version');
  const push = (values: string[]): void => {
    const line = lineOf(values, engine.info.lines);
    lastGoodLine = line;
    headerLength ??= values.length;
    queue.push({ kind: 'record', line, values });
  };
  const close = (): void => undefined;
  parser.on('skip', (error: CsvError & { record?: string[]; lines?: number }) => {
    const code = RECORD_LEVEL[error.code];
    if (code !== undefined && error.record !== undefined) {
      const line = lineOf(error.record, error.lines ?? 0);
      queue.push({
        kind: 'bad',
        line,
        code,
        message: recordMessage(code, error.record.length, headerLength),
        values: error.record,
      });
      return;
    }
    fatal ??= fileError(file, error, lastGoodLine, maxRecordBytes);
  });
  const fail = (error: unknown): FileRefusedError =>
    fatal ?? fileError(file, error as CsvError, lastGoodLine, maxRecordBytes);

  try {
    for await (const bytes of utf8Chunks(file, options)) {
      const error = engine.parse(bytes, false, push, close);
      if (error !== undefined) throw fail(error);
      if (fatal !== undefined) throw fatal;
      if (queue.length > 0) {
        yield queue;
        queue = [];
      }
    }
    const error = engine.parse(undefined, true, push, close);
    if (error !== undefined) throw fail(error);
    if (fatal !== undefined) throw fatal;
    if (queue.length > 0) yield queue;
  } finally {
    parser.destroy();
  }
}

/** The message of a record csv-parse (or readPlainCsvBatches) could read but not accept. */
export function recordMessage(code: CsvBadRecord['code'], got: number, expected: number | undefined): string {
  if (code === 'CSV_FIELD_COUNT') {
    return (
      `this row has ${got} field${got === 1 ? '' : 's'}` +
      (expected === undefined ? '' : ` where the header has ${expected}`) +
      ': a value containing the delimiter must be in double quotes, and no cell may be missing.'
    );
  }
  return 'a double quote is misplaced: quote the whole value ("...") and double any quote inside it ("").';
}

function fileError(file: string, error: CsvError, lastGoodLine: number, maxRecordBytes: number): FileRefusedError {
  const after = lastGoodLine > 0 ? ` after line ${lastGoodLine}` : '';
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') {
    return new FileRefusedError(
      'CSV_QUOTE_NOT_CLOSED',
      file,
      `a quoted value opened${after} is never closed. Look for a stray double quote (") there.`,
      { cause: error },
    );
  }
  if (error.code === 'CSV_MAX_RECORD_SIZE') {
    return new FileRefusedError(
      'CSV_RECORD_TOO_LARGE',
      file,
      `a record${after} is longer than ${maxRecordBytes} characters. Usually a double quote (") is not closed, so the rest of the file reads as one value.`,
      { cause: error },
    );
  }
  return new FileRefusedError('CSV_UNREADABLE', file, `cannot be read as CSV${after}: ${error.message}`, {
    cause: error,
  });
}

function count(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}
