import { Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import iconv from 'iconv-lite';
import type { CsvOutputSettings } from '../config.js';
import type { IngestEncoding, IngestFormat } from './types.js';

/**
 * How a CSV file is written: its delimiter, its encoding and whether it starts with a UTF-8
 * byte-order mark. The files written for an input (rejects, results, dead-letter exports) speak
 * the input's dialect, so a Dutch Excel file (`;`, BOM) gets `;` and a BOM back and opens in
 * columns where it came from; BULKORDER_OUTPUT_* chooses otherwise.
 */
export interface CsvDialect {
  delimiter: string;
  encoding: IngestEncoding;
  /** A UTF-8 byte-order mark first (only ever with UTF-8). */
  bom: boolean;
}

/**
 * The dialect of a file that has none of its own (a JSON or NDJSON input, a batch from before
 * dialects were kept): `,`, UTF-8 with BOM, which Excel opens in columns in any locale that
 * separates lists with `,` and reads as UTF-8 whatever its code page.
 */
export const DEFAULT_DIALECT: Readonly<CsvDialect> = Object.freeze({ delimiter: ',', encoding: 'utf-8', bom: true });

/** The dialect an input was read in (a RecordSource has these facts): a CSV's own, else DEFAULT_DIALECT. */
export function inputDialect(source: {
  format: IngestFormat;
  delimiter: string;
  encoding: IngestEncoding;
  bom: boolean;
}): CsvDialect {
  if (source.format !== 'csv') return { ...DEFAULT_DIALECT };
  return { delimiter: source.delimiter, encoding: source.encoding, bom: source.encoding === 'utf-8' && source.bom };
}

/** The dialect to write in: the input's, with what the operator chose instead (BULKORDER_OUTPUT_*). */
export function outputDialect(input: CsvDialect, settings: CsvOutputSettings = {}): CsvDialect {
  const encoding = settings.encoding ?? input.encoding;
  return {
    delimiter: settings.delimiter ?? input.delimiter,
    encoding,
    bom: encoding === 'utf-8' && (settings.bom ?? input.bom),
  };
}

/** Text as the dialect's bytes (a character windows-1252 or latin1 cannot hold becomes `?`). */
export function encodeCsv(text: string, dialect: CsvDialect): Buffer {
  return dialect.encoding === 'utf-8' ? Buffer.from(text, 'utf8') : iconv.encode(text, dialect.encoding);
}

/**
 * A stream that turns UTF-8 text (csv-stringify's output) into the dialect's bytes; characters cut
 * between two chunks are kept for the next one.
 */
export function encodingStream(dialect: CsvDialect): Transform {
  const decoder = new StringDecoder('utf8');
  return new Transform({
    transform(chunk: Buffer | string, _encoding, done) {
      const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
      done(null, encodeCsv(text, dialect));
    },
    flush(done) {
      done(null, encodeCsv(decoder.end(), dialect));
    },
  });
}

/** What a file starts with before its header: the byte-order mark, when the dialect has one. */
export function csvPreamble(dialect: CsvDialect): string {
  return dialect.bom ? '\uFEFF' : '';
}

/** The HTTP media type of a CSV file in this dialect (the dashboard's downloads). */
export function csvMediaType(dialect: CsvDialect): string {
  return `text/csv; charset=${dialect.encoding === 'latin1' ? 'iso-8859-1' : dialect.encoding}`;
}

/** `";", UTF-8 with BOM`: for reports and logs. */
export function describeDialect(dialect: CsvDialect): string {
  const delimiter = dialect.delimiter === '\t' ? 'tab' : `"${dialect.delimiter}"`;
  const encoding = dialect.encoding === 'utf-8' ? 'UTF-8' : dialect.encoding;
  const bom = dialect.bom ? ' with BOM' : ' without BOM';
  return `${delimiter}, ${encoding}${dialect.encoding === 'utf-8' ? bom : ''}`;
}

/** A dialect kept as JSON (on a batch record), or undefined when it is missing or unreadable. */
export function parseDialect(json: string | undefined): CsvDialect | undefined {
  if (json === undefined || json === '') return undefined;
  try {
    const value = JSON.parse(json) as Partial<CsvDialect>;
    if (typeof value.delimiter !== 'string' || typeof value.bom !== 'boolean') return undefined;
    if (value.encoding !== 'utf-8' && value.encoding !== 'windows-1252' && value.encoding !== 'latin1')
      return undefined;
    return { delimiter: value.delimiter, encoding: value.encoding, bom: value.bom };
  } catch {
    return undefined;
  }
}
