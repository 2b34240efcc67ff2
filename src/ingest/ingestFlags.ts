import { UsageError } from '../errors.js';
import type { ColumnSchema } from './columnSchema.js';
import { loadMapping } from './loadMapping.js';
import { ORDER_COLUMNS } from './orderColumns.js';
import { parseDelimiter } from './parseDelimiter.js';
import type { IngestOptions } from './openOrderSource.js';
import { parseMaxRejected } from './rejectionLimit.js';
import type { IngestEncoding, IngestFormat } from './types.js';

/** The reading flags `validate` and `import` share, as commander hands them over. */
export interface IngestFlags {
  format?: string;
  delimiter?: string;
  encoding?: string;
  map?: string;
  strictPhone?: boolean;
  strictProducts?: boolean;
  allowEmpty?: boolean;
  maxLinesPerOrder?: string;
  threads?: string;
  maxRejected?: string;
}

const FORMATS: readonly IngestFormat[] = ['csv', 'json', 'ndjson'];
const ENCODINGS: Readonly<Record<string, IngestEncoding>> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  latin1: 'latin1',
  'iso-8859-1': 'latin1',
};

/**
 * Turns the shared flags into IngestOptions, so both commands read files alike. Bad values are
 * usage errors (exit 2); the --map file is read and checked here (against `schema`'s fields), before the input file.
 */
export async function ingestOptionsFromFlags(
  flags: IngestFlags,
  schema: ColumnSchema = ORDER_COLUMNS,
): Promise<IngestOptions> {
  const options: IngestOptions = {};
  if (flags.format !== undefined) {
    const format = flags.format.toLowerCase() as IngestFormat;
    if (!FORMATS.includes(format))
      throw new UsageError('FORMAT_INVALID', `--format must be csv, json or ndjson (got "${flags.format}").`);
    options.format = format;
  }
  if (flags.delimiter !== undefined) options.delimiter = parseDelimiter(flags.delimiter);
  if (flags.encoding !== undefined) {
    const encoding = ENCODINGS[flags.encoding.toLowerCase()];
    if (encoding === undefined)
      throw new UsageError(
        'ENCODING_OPTION_INVALID',
        `--encoding must be utf-8, windows-1252 or latin1 (got "${flags.encoding}").`,
      );
    options.encoding = encoding;
  }
  if (flags.map !== undefined) options.mapping = await loadMapping(flags.map, schema);
  if (flags.strictPhone === true) options.strictPhone = true;
  if (flags.strictProducts === true) options.strictProducts = true;
  if (flags.allowEmpty === true) options.allowEmpty = true;
  if (flags.maxLinesPerOrder !== undefined) {
    const max = Number(flags.maxLinesPerOrder);
    if (!/^\d+$/.test(flags.maxLinesPerOrder) || max < 1 || max > 100_000) {
      throw new UsageError(
        'MAX_LINES_INVALID',
        `--max-lines-per-order must be a whole number from 1 to 100000 (got "${flags.maxLinesPerOrder}").`,
      );
    }
    options.maxLinesPerOrder = max;
  }
  if (flags.threads !== undefined) {
    if (!/^\d+$/.test(flags.threads) || Number(flags.threads) > 64) {
      throw new UsageError(
        'THREADS_INVALID',
        `--threads must be a whole number from 0 to 64 (got "${flags.threads}").`,
      );
    }
    options.threads = Number(flags.threads);
  }
  if (flags.maxRejected !== undefined) options.maxRejectedPercent = parseMaxRejected(flags.maxRejected);
  return options;
}
