import { parse as parseCsvSync } from 'csv-parse/sync';
import { FileRefusedError } from '../errors.js';
import type { ColumnSchema } from './columnSchema.js';
import { sniffFile } from './decodeFile.js';
import { checkJsonStart, fileSize, formatFromExtension, readHead } from './fileChecks.js';
import { detectDelimiter, headerLine, otherDelimiter, sepLine } from './detectDelimiter.js';
import { checkDelimiter } from './parseDelimiter.js';
import { readCsvRecords, type CsvBadRecord, type CsvRecord } from './readCsvRecords.js';
import { readJsonArray, readNdjson, type JsonOversize, type JsonRecord } from './readJsonRecords.js';
import { resolveColumns, resolveMapping, type ColumnPlan, type ResolvedMapping } from './resolveColumns.js';
import type { IngestEncoding, IngestFormat, RejectedRecord, RowError, ValidRecord } from './types.js';
import { createUnitStore, decodeSpillLine, type GroupedUnit, type UnitCodec } from './unitStore.js';
import { FirstRowsJudge } from './rejectionLimit.js';
import type { GroupLimit } from './groupLimit.js';
import { DEFAULT_MAX_LINES_PER_ORDER } from './orderGroupLimit.js';
import type { RowRules } from './validateRow.js';
import { createUnitPool, defaultIngestThreads, type ThreadedSchema, type UnitPool } from './unitPool.js';

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * Buckets per file at most. One bucket is decoded and assembled at a time, and the peak RSS of a
 * large file follows the size of one bucket (V8 lets the old generation grow to a multiple of
 * what a bucket keeps alive before it collects): 128 KiB of input per bucket, up to 1,024 of
 * them, keeps `validate` of 1,000,000 rows (121 MB) at 184-185 MiB, where 512 KiB buckets (at
 * most 256) peaked at 188-238 MiB (BENCHMARKS.md row 3b).
 */
const MAX_BUCKETS = 1024;

/** How to read an input file (orders, accounts). Every field is optional. */
export interface IngestOptions {
  /** Default: from the extension (.csv .tsv .txt, .json, .ndjson .jsonl). */
  format?: IngestFormat;
  /** CSV delimiter, one character; default detected from the header line (`,` `;` tab). */
  delimiter?: string;
  /** Default `utf-8`; invalid UTF-8 refuses the file with a hint to pass `windows-1252`. */
  encoding?: IngestEncoding;
  /** From a --map file: header (or JSON key) in the file -> field name, or "" to ignore it. */
  mapping?: Record<string, string>;
  /** Longest record (CSV row, JSON element, NDJSON line) in characters; default 64 KiB. */
  maxRecordBytes?: number;
  /** Parent folder of the temporary spill files; default the OS temp folder. */
  tmpDir?: string;
  /** Files up to this size are grouped in memory, larger ones spill to temp files; default 1 MiB. */
  spillThresholdBytes?: number;
  /** Input bytes per spill bucket (one bucket is in memory at a time); default 128 KiB, at most MAX_BUCKETS buckets. */
  bucketBytes?: number;
  /** Most product lines in one order; default 1000 (orders only). */
  maxLinesPerOrder?: number;
  /** Read size in bytes; default 64 KiB. */
  chunkBytes?: number;
  /** Refuse phone numbers that are possible but not known to be in use (`--strict-phone`); default: accept with a note. */
  strictPhone?: boolean;
  /** Refuse an order listing one product on two lines (DUPLICATE_PRODUCT) instead of merging them. */
  strictProducts?: boolean;
  /**
   * Worker threads that validate the rows of a CSV file big enough to spill, while the main
   * thread parses (`--threads`); 0 validates in the main thread. Default: defaultIngestThreads (1 from 4 cores, else 0).
   */
  threads?: number;
  /** Accept a file with no rows (`--allow-empty`); default: refused (FILE_EMPTY, exit 3), so an empty nightly export is not a quiet success. */
  allowEmpty?: boolean;
  /**
   * `--max-rejected`: refuse the file (TOO_MANY_REJECTED) when more than this percent of its first 10,000 rows are
   * rejected, 100 never. Given, the first read already refuses a file whose rows' own errors pass the share, before
   * it reads or spills the rest (FirstRowsJudge); absent, items() judges nothing. validate and import give it
   * (default 50, withRejectionLimit) and judge the items again (limitRejections, rejectionLimit.ts).
   */
  maxRejectedPercent?: number;
}

/** Counts after (or during) iteration. */
export interface SourceStats {
  /** Data rows read (CSV rows, flat JSON rows, product lines of JSON orders); blank rows not counted. */
  rows: number;
  /** Records assembled: orders, or accounts for an employee file (the batch counters call them `orders`). */
  records: number;
  valid: number;
  rejected: number;
}

/** What turning JSON elements into units needs to know. */
export interface JsonUnitContext {
  mapping: ResolvedMapping;
  /** Keys of flat rows that map to no field; filled in as they are met. */
  ignored: Set<string>;
  maxLinesPerOrder: number;
  /** Rules a person tightened with flags (e.g. --strict-phone). */
  rules?: RowRules;
}

/** What assembling one bucket of units needs besides the units. */
export interface AssembleContext {
  file: string;
  columns: readonly string[];
  /** Most product lines one order may have; more rejects the order. */
  maxLinesPerOrder: number;
  /** --strict-products: one product on two lines of an order is refused, not merged. */
  strictProducts?: boolean;
}

/**
 * One record kind (orders, employee accounts) as the reading machinery sees it: its columns,
 * how one CSV row or JSON element becomes a first-pass unit, how units travel through spill
 * files, and how a bucket of units becomes valid and rejected records. Reading, decoding,
 * header matching, spilling and rejects are shared; only these parts differ.
 */
export interface RecordSchema<U extends GroupedUnit & { rows: readonly unknown[] }, P> {
  columns: ColumnSchema;
  csvUnit(record: CsvRecord | CsvBadRecord, plan: ColumnPlan, rules: RowRules): U;
  jsonUnit(record: JsonRecord | JsonOversize, context: JsonUnitContext): U;
  /** How units travel through spill files, for a file of these columns (orders: cells are values as written). */
  codec(plan: ColumnPlan): UnitCodec<U>;
  assemble(units: readonly U[], context: AssembleContext): Iterable<ValidRecord<P> | RejectedRecord>;
  /** The name unitThread.ts knows this schema by, to run csvUnit and codec in worker threads; absent: never in a thread. */
  thread?: ThreadedSchema;
  /** A cap on the rows of one group, so an oversized one is never held whole (orders: product lines). */
  limit?(maxRows: number): GroupLimit<U>;
  /**
   * In a file that spills: whether a unit's own errors reject it, so it is reported during the first read instead of
   * spilled; `standIn` (no rows) is spilled in its place when other units of its group must be rejected with it.
   * Undefined: spill the unit. Absent: every unit is spilled (accounts).
   */
  settle?(unit: U): { standIn?: U } | undefined;
  /** The errors that reject a unit's rows whatever the rest of their group holds, and how many rows they reject. */
  ownErrors(unit: U): { rejectedRows: number; errors: readonly RowError[] };
}

/** An input file that passed the whole-file checks, ready to be read. */
export interface RecordSource<P> {
  file: string;
  format: IngestFormat;
  /** Original header names, in order (for JSON: the default field names). */
  columns: string[];
  /** The CSV delimiter in use (detected or given); `,` for JSON, whose rejects file is CSV. */
  delimiter: string;
  encoding: IngestEncoding;
  /**
   * Validated orders and rejects. Reads the whole file once (checking, and spilling big files to
   * temp files) before the first valid record, so an error that refuses the file (FileRefusedError)
   * comes before anything could be queued. In a file that spills, records rejected by their own
   * errors come during that first read, in file order, and are not spilled (only a stand-in of a few
   * dozen bytes when their order may have other rows, which then come later as ORDER_NOT_SENT): the
   * spill holds the valid data. Output order may differ from file order; `lines` carry the truth.
   * Can be iterated once.
   */
  items(): AsyncIterable<ValidRecord<P> | RejectedRecord>;
  stats(): SourceStats;
  /** Columns (or flat JSON keys) that map to no field and were left out. */
  ignoredColumns(): string[];
  /** Rows with every cell empty (spreadsheets leave them at the end), skipped. */
  blankRows(): number;
  /** Facts about how the file is read that a person should see (e.g. no orderRef column). */
  warnings: string[];
}

/**
 * Opens and checks a file of one record kind (existence, encoding, header, required columns)
 * and throws FileRefusedError (exit 3) before yielding anything; UsageError (exit 2) for a bad
 * option or mapping. Temporary files exist only while `items()` runs and are always removed.
 */
export async function openRecordSource<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  file: string,
  options: IngestOptions,
  schema: RecordSchema<U, P>,
): Promise<RecordSource<P>> {
  const size = await fileSize(file); // a wrong path is the likelier mistake than a wrong extension
  const encoding = options.encoding ?? 'utf-8';
  await sniffFile(file, encoding); // before the extension: an .xlsx is named as one, not as an unknown format
  const format = options.format ?? formatFromExtension(file);
  const maxRecordBytes = options.maxRecordBytes ?? 64 * KIB;
  const maxLinesPerOrder = options.maxLinesPerOrder ?? DEFAULT_MAX_LINES_PER_ORDER;
  if (options.delimiter !== undefined) checkDelimiter(options.delimiter);
  const mapping = resolveMapping(options.mapping, schema.columns);
  const head = await readHead(file, encoding, maxRecordBytes, options.chunkBytes);

  let plan: ColumnPlan;
  let delimiter = ',';
  // Excel's `sep=;` line names the delimiter; the header is the line after it.
  const sep = format === 'csv' ? sepLine(head.text) : undefined;
  if (format === 'csv') {
    const line = headerLine(
      (sep === undefined ? head.text : head.text.slice(sep.length)).replace(/^[\r\n]+/, ''),
      head.whole,
    );
    if (line === undefined) {
      throw new FileRefusedError(
        'HEADER_INVALID',
        file,
        `no header line within the first ${maxRecordBytes} characters; is this a CSV file with a header row?`,
      );
    }
    delimiter = options.delimiter ?? sep?.delimiter ?? detectDelimiter(line);
    const [headers] = parseCsvSync(line, { delimiter, bom: true, relax_quotes: true, relax_column_count: true });
    const guess = (headers ?? []).length === 1 && options.delimiter === undefined ? otherDelimiter(line) : undefined;
    if (guess !== undefined) {
      // A --map hint would be meaningless: the columns were never split.
      throw new FileRefusedError(
        'DELIMITER_UNKNOWN',
        file,
        `line 1: the header reads as one column; its delimiter is not one of , ; tab | (it looks like ${JSON.stringify(guess)}). Give it with --delimiter '${guess}'.`,
        { details: { line: 1, guess } },
      );
    }
    plan = resolveColumns(file, headers ?? [], mapping, schema.columns);
  } else {
    checkJsonStart(file, format, head.text, schema.columns.noun);
    plan = { columns: [...schema.columns.fields], fieldIndex: {}, ignored: [], warnings: [] };
  }

  const spillThreshold = options.spillThresholdBytes ?? MIB;
  const bucketCount =
    size <= spillThreshold
      ? 1
      : Math.min(MAX_BUCKETS, Math.max(2, Math.ceil(size / (options.bucketBytes ?? 128 * KIB))));
  const stats: SourceStats = { rows: 0, records: 0, valid: 0, rejected: 0 };
  const ignored = new Set(plan.ignored);
  let blankRows = 0;
  let iterated = false;

  const chunk = options.chunkBytes ? { chunkBytes: options.chunkBytes } : {};
  const rules: RowRules = { strictPhone: options.strictPhone === true };
  const fromLine = sep === undefined ? {} : { fromLine: 2 };
  const units = (): AsyncGenerator<U> =>
    format === 'csv'
      ? csvUnits(
          file,
          plan,
          { delimiter, encoding, maxRecordBytes, ...chunk, ...fromLine },
          schema,
          rules,
          () => blankRows++,
        )
      : jsonUnits(file, format, { encoding, maxRecordBytes, ...chunk }, schema, {
          mapping,
          ignored,
          maxLinesPerOrder,
          rules,
        });

  return {
    file,
    format,
    columns: plan.columns,
    delimiter,
    encoding,
    stats: () => ({ ...stats }),
    ignoredColumns: () => [...ignored],
    blankRows: () => blankRows,
    warnings: plan.warnings,
    items: async function* () {
      if (iterated) throw new Error('RecordSource.items() can be iterated only once');
      iterated = true;
      const codec = schema.codec(plan);
      const store = await createUnitStore<U>({
        codec,
        bucketCount,
        ...(options.tmpDir === undefined ? {} : { tmpDir: options.tmpDir }),
        ...(schema.limit === undefined ? {} : { limit: schema.limit(maxLinesPerOrder) }),
      });
      let pool: UnitPool | undefined;
      const judge =
        options.maxRejectedPercent === undefined ? undefined : new FirstRowsJudge(file, options.maxRejectedPercent);
      const judgeUnit = (unit: U): void => {
        const own = schema.ownErrors(unit);
        judge!.add(unit.rows.length, own.rejectedRows, own.errors);
      };
      // In a file that spills, a unit its own errors reject is reported now, not spilled (schema.settle).
      const settle = bucketCount > 1 ? schema.settle : undefined;
      const context: AssembleContext = {
        file,
        columns: plan.columns,
        maxLinesPerOrder,
        ...(options.strictProducts === true ? { strictProducts: true } : {}),
      };
      function* counted(items: Iterable<ValidRecord<P> | RejectedRecord>): Generator<ValidRecord<P> | RejectedRecord> {
        for (const item of items) {
          stats.records++;
          if (item.kind === 'valid') stats.valid++;
          else stats.rejected++;
          yield item;
        }
      }
      try {
        const threads = options.threads ?? defaultIngestThreads();
        if (format === 'csv' && bucketCount > 1 && threads > 0 && schema.thread !== undefined) {
          pool = createUnitPool({ threads, schema: schema.thread, plan, rules, bucketCount });
          for await (const encoded of pool.encode(
            csvRecords(file, { delimiter, encoding, maxRecordBytes, ...chunk, ...fromLine }, () => blankRows++),
          )) {
            stats.rows += encoded.rows;
            const settled = (encoded.settled ?? []).map((line) => codec.decode(line));
            if (judge?.judging === true) {
              for (const line of encoded.lines) if (judge.judging) judgeUnit(decodeSpillLine(line, codec));
              for (const unit of settled) if (judge.judging) judgeUnit(unit);
            }
            await store.addEncoded(encoded);
            for (const unit of settled) yield* counted(schema.assemble([unit], context));
          }
          await pool.close(); // the second pass runs in this thread: free the threads' memory now
        } else {
          for await (const unit of units()) {
            stats.rows += unit.rows.length;
            if (judge?.judging === true) judgeUnit(unit);
            const early = settle?.(unit);
            if (early === undefined) {
              await store.add(unit);
              continue;
            }
            if (early.standIn !== undefined) await store.add(early.standIn);
            yield* counted(schema.assemble([unit], context));
          }
        }
        if (stats.rows === 0 && options.allowEmpty !== true) {
          const blank = blankRows > 0 ? ` (only ${blankRows} blank row${blankRows === 1 ? '' : 's'})` : '';
          throw new FileRefusedError(
            'FILE_EMPTY',
            file,
            `the file has no ${schema.columns.noun}s${blank}. An export that came out empty is not a success; check the export, or pass --allow-empty if an empty file is expected.`,
          );
        }
        for await (const bucket of store.buckets()) yield* counted(schema.assemble(bucket, context));
      } finally {
        await pool?.close();
        await store.dispose();
      }
    },
  };
}

async function* csvUnits<U extends GroupedUnit & { rows: readonly unknown[] }>(
  file: string,
  plan: ColumnPlan,
  read: Parameters<typeof readCsvRecords>[1],
  schema: RecordSchema<U, unknown>,
  rules: RowRules,
  onBlank: () => void,
): AsyncGenerator<U> {
  for await (const record of csvRecords(file, read, onBlank)) yield schema.csvUnit(record, plan, rules);
}

/** The data records of a CSV file: the header (already resolved by openRecordSource) and blank rows left out. */
async function* csvRecords(
  file: string,
  read: Parameters<typeof readCsvRecords>[1],
  onBlank: () => void,
): AsyncGenerator<CsvRecord | CsvBadRecord> {
  let header = true;
  for await (const record of readCsvRecords(file, read)) {
    if (header) {
      header = false;
      continue;
    }
    if (record.kind === 'record' && record.values.every((value) => value.trim() === '')) {
      onBlank();
      continue;
    }
    yield record;
  }
}

async function* jsonUnits<U extends GroupedUnit & { rows: readonly unknown[] }>(
  file: string,
  format: 'json' | 'ndjson',
  read: Parameters<typeof readJsonArray>[1],
  schema: RecordSchema<U, unknown>,
  context: JsonUnitContext,
): AsyncGenerator<U> {
  const records = format === 'json' ? readJsonArray(file, read) : readNdjson(file, read);
  for await (const record of records) yield schema.jsonUnit(record, context);
}
