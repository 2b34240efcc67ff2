import { parse as parseCsvSync } from 'csv-parse/sync';
import { FileRefusedError } from '../errors.js';
import type { ColumnSchema } from './columnSchema.js';
import { sniffFile } from './decodeFile.js';
import { checkJsonStart, fileSize, formatFromExtension, readHead } from './fileChecks.js';
import { detectDelimiter, headerLine, otherDelimiter, sepLine } from './detectDelimiter.js';
import { checkDelimiter } from './parseDelimiter.js';
import { readCsvBatches, type CsvBadRecord, type CsvReadOptions, type CsvRecord } from './readCsvRecords.js';
import { NotUnquotedError, readPlainCsvBatches, readUnquotedCsvBatches } from './readPlainCsv.js';
import { readJsonArray, readNdjson, type JsonOversize, type JsonRecord } from './readJsonRecords.js';
import { resolveColumns, resolveMapping, type ColumnPlan, type ResolvedMapping } from './resolveColumns.js';
import type { IngestEncoding, IngestFormat, RejectedRecord, RowError, ValidRecord } from './types.js';
import { createUnitStore, decodeSpillLine, type GroupedUnit, type UnitCodec } from './unitStore.js';
import { FirstRowsJudge } from './rejectionLimit.js';
import type { GroupLimit } from './groupLimit.js';
import { DEFAULT_MAX_LINES_PER_ORDER } from './orderGroupLimit.js';
import type { RowRules } from './validateRow.js';
import { createUnitPool, defaultIngestThreads, type ThreadedSchema, type UnitPool } from './unitPool.js';
import { scanFile, type FileScan, type ScanOptions } from './scanFile.js';
import { ShapeScanner, type ShapeKey, type ShapeVerdict } from './shapeScan.js';
import { shapeHashOf } from './closedKeys.js';
import { GroupCameBackError, StreamGroups, type GroupEnds } from './streamGroups.js';
import { sweepStaleSpillDirs } from './spillDir.js';
import { tmpdir } from 'node:os';

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
/** Records handed out together by RecordSource.batches(). */
const BATCH_ITEMS = 256;
/** Rows a group stays open after its last row when a large CSV file is grouped in one stream. */
const STREAM_WINDOW_ROWS = 1000;
/** Rows held in open groups at most while streaming (the scan sends a file past it to the spill path). */
const STREAM_OPEN_ROWS = 10 * STREAM_WINDOW_ROWS;
/** Most bits remembering closed groups (16 MiB, ClosedKeys): ~1.3M groups; past that the scan says "spread" more often. */
const MAX_CLOSED_BITS = 2 ** 27;

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
  /**
   * A CSV file over the spill threshold whose groups' rows lie within this many rows of each other is
   * grouped in one stream, without spill files (ShapeScanner decides); default 1,000; 0 never streams.
   */
  streamWindowRows?: number;
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
   * (default 50, withRejectionLimit) and judge the records again (limitRejectionBatches, rejectionLimit.ts).
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
  /** How rows group, from their cells (a large CSV file is then grouped in one stream when it can be); absent: never. */
  shape?(plan: ColumnPlan): ShapeKey | undefined;
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
  /** The file starts with a UTF-8 byte-order mark (Excel's "CSV UTF-8" does). */
  bom: boolean;
  /**
   * One read of the file's bytes before its rows (scanFile): its NUL byte, its hash when asked, and for a
   * large CSV file whether its groups can be read in one stream (items() uses the answer, or scans itself).
   */
  scan(options?: Pick<ScanOptions, 'sha256'>): Promise<FileScan>;
  /**
   * Validated orders and rejects. A file up to the spill threshold is read whole before the first
   * record. A larger CSV file whose scan found every group's rows close together (`streamed()`) is
   * grouped in one stream: each record comes once its group is complete, while the file is read, and
   * the errors that refuse a file are ones the scan already ruled out. Any other large file is read
   * whole first, spilling to temp files (an error that refuses the file comes before anything could
   * be queued); there records rejected by their own errors come during that first read, in file order,
   * and are not spilled (only a stand-in of a few dozen bytes when their order may have other rows,
   * which then come later as ORDER_NOT_SENT): the spill holds the valid data. Output order may differ
   * from file order; `lines` carry the truth. Can be iterated once.
   */
  items(): AsyncIterable<ValidRecord<P> | RejectedRecord>;
  /** The same records, in the same order, a few hundred at a time (no promise per record). Either this or items(), once. */
  batches(): AsyncIterable<(ValidRecord<P> | RejectedRecord)[]>;
  /** Whether items() groups in one stream (known after scan(), or once items() started). */
  streamed(): boolean;
  stats(): SourceStats;
  /** Columns (or flat JSON keys) that map to no field and were left out. */
  ignoredColumns(): string[];
  /** Rows with every cell empty (spreadsheets leave them at the end), skipped. */
  blankRows(): number;
  /** Facts about how the file is read that a person should see (e.g. no orderRef column). */
  warnings: string[];
}

/** What is fixed once a file's header is read: how to read the rest of it. */
interface Opened<U extends GroupedUnit & { rows: readonly unknown[] }, P> {
  file: string;
  format: IngestFormat;
  options: IngestOptions;
  schema: RecordSchema<U, P>;
  plan: ColumnPlan;
  mapping: ResolvedMapping;
  maxLinesPerOrder: number;
  bucketCount: number;
  rules: RowRules;
  /** How the CSV reader reads this file (its header and `sep=` line included). */
  csvRead: CsvReadOptions;
  jsonRead: Parameters<typeof readJsonArray>[1];
  /** How rows group, when the file is a large CSV file that may stream. */
  shapeKey: ShapeKey | undefined;
  window: number;
}

/** What reading a file finds out as it goes. */
interface Progress {
  stats: SourceStats;
  blankRows: number;
  ignored: Set<string>;
  shape: ShapeVerdict | undefined;
  /** With a `stream` shape: the rows that end their group, so each group is handed out at its last row. */
  groupEnds: GroupEnds | undefined;
  /** The first rows were judged on their own (before the scan): the first read does not judge them again. */
  firstRowsJudged: boolean;
}

type Item<P> = ValidRecord<P> | RejectedRecord;

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
  const { bom } = await sniffFile(file, encoding); // before the extension: an .xlsx is named as one, not as an unknown format
  const format = options.format ?? formatFromExtension(file);
  const maxRecordBytes = options.maxRecordBytes ?? 64 * KIB;
  if (options.delimiter !== undefined) checkDelimiter(options.delimiter);
  const mapping = resolveMapping(options.mapping, schema.columns);
  const head = await readHead(file, encoding, maxRecordBytes, options.chunkBytes);
  const { plan, delimiter, fromLine } =
    format === 'csv'
      ? csvPlan({ file, text: head.text, whole: head.whole, options, mapping, schema, maxRecordBytes })
      : jsonPlan(file, format, head.text, schema);
  const spillThreshold = options.spillThresholdBytes ?? MIB;
  const bucketCount =
    size <= spillThreshold
      ? 1
      : Math.min(MAX_BUCKETS, Math.max(2, Math.ceil(size / (options.bucketBytes ?? 128 * KIB))));
  const chunk = options.chunkBytes ? { chunkBytes: options.chunkBytes } : {};
  // A large CSV file is scanned for its shape first: grouped close together, it streams without spill files.
  const window = options.streamWindowRows ?? STREAM_WINDOW_ROWS;
  const o: Opened<U, P> = {
    file,
    format,
    options,
    schema,
    plan,
    mapping,
    maxLinesPerOrder: options.maxLinesPerOrder ?? DEFAULT_MAX_LINES_PER_ORDER,
    bucketCount,
    rules: { strictPhone: options.strictPhone === true },
    csvRead: { delimiter, encoding, maxRecordBytes, ...chunk, ...fromLine },
    jsonRead: { encoding, maxRecordBytes, ...chunk },
    shapeKey: format === 'csv' && bucketCount > 1 && window > 0 ? schema.shape?.(plan) : undefined,
    window,
  };
  const p: Progress = {
    stats: { rows: 0, records: 0, valid: 0, rejected: 0 },
    blankRows: 0,
    ignored: new Set(plan.ignored),
    shape: undefined,
    groupEnds: undefined,
    firstRowsJudged: false,
  };
  let iterated = false;
  const source: RecordSource<P> = {
    file,
    format,
    columns: plan.columns,
    delimiter,
    encoding,
    bom,
    stats: () => ({ ...p.stats }),
    ignoredColumns: () => [...p.ignored],
    blankRows: () => p.blankRows,
    warnings: plan.warnings,
    scan: (scanOptions = {}) => scanShape(o, p, scanOptions),
    streamed: () => p.shape?.mode === 'stream',
    items: async function* () {
      for await (const batch of source.batches()) yield* batch;
    },
    batches: async function* () {
      if (iterated) throw new Error('RecordSource.items() can be iterated only once');
      iterated = true;
      if (o.shapeKey !== undefined && p.shape === undefined) await scanShape(o, p, { nul: false });
      if (p.shape?.mode === 'stream' && o.shapeKey !== undefined)
        yield* streamedBatches(o, p, { key: o.shapeKey, window: p.shape.window });
      else yield* spilledBatches(o, p);
    },
  };
  return source;
}

/** A CSV file's columns from its header line (after an Excel `sep=` line, which names the delimiter). */
function csvPlan(input: {
  file: string;
  text: string;
  whole: boolean;
  options: IngestOptions;
  mapping: ResolvedMapping;
  schema: RecordSchema<GroupedUnit & { rows: readonly unknown[] }, unknown>;
  maxRecordBytes: number;
}): { plan: ColumnPlan; delimiter: string; fromLine: { fromLine?: number } } {
  const { file, text, options } = input;
  const sep = sepLine(text);
  const line = headerLine((sep === undefined ? text : text.slice(sep.length)).replace(/^[\r\n]+/, ''), input.whole);
  if (line === undefined) {
    throw new FileRefusedError(
      'HEADER_INVALID',
      file,
      `no header line within the first ${input.maxRecordBytes} characters; is this a CSV file with a header row?`,
    );
  }
  const delimiter = options.delimiter ?? sep?.delimiter ?? detectDelimiter(line);
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
  return {
    plan: resolveColumns(file, headers ?? [], input.mapping, input.schema.columns),
    delimiter,
    fromLine: sep === undefined ? {} : { fromLine: 2 },
  };
}

/** A JSON file's columns: the schema's fields (its elements are checked one by one). */
function jsonPlan<U extends GroupedUnit & { rows: readonly unknown[] }>(
  file: string,
  format: 'json' | 'ndjson',
  head: string,
  schema: RecordSchema<U, unknown>,
): { plan: ColumnPlan; delimiter: string; fromLine: { fromLine?: number } } {
  checkJsonStart(file, format, head, schema.columns.noun);
  return {
    plan: { columns: [...schema.columns.fields], fieldIndex: {}, ignored: [], warnings: [] },
    delimiter: ',',
    fromLine: {},
  };
}

/** The file's one read before its rows (scanFile), with its shape when it is a large CSV file that may stream. */
async function scanShape<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  o: Opened<U, P>,
  p: Progress,
  scanOptions: ScanOptions,
): Promise<FileScan> {
  const { shapeKey, csvRead } = o;
  const scanner =
    shapeKey === undefined || p.shape !== undefined || Buffer.byteLength(csvRead.delimiter ?? ',') !== 1
      ? undefined
      : new ShapeScanner({
          delimiter: csvRead.delimiter ?? ',',
          shape: shapeKey,
          window: o.window,
          maxGroupRows: o.maxLinesPerOrder,
          maxOpenRows: Math.max(STREAM_OPEN_ROWS, 10 * o.window),
          maxRecordBytes: csvRead.maxRecordBytes ?? 64 * KIB,
          closedBits: MAX_CLOSED_BITS,
          encoding: csvRead.encoding ?? 'utf-8',
          leadingRecords: csvRead.fromLine ?? 1, // a sep= line on line 1, then the header
        });
  // A mostly wrong file is refused after its first 10,000 rows, as in the first read: before the scan
  // reads all of it (the scan of a 1 GB file of bad rows would take seconds to say what no one needs).
  if (scanner !== undefined) await judgeFirstRows(o, p);
  const result = await scanFile(o.file, { ...scanOptions, ...(scanner === undefined ? {} : { shape: scanner }) });
  if (result.shape === undefined) return result;
  p.shape = result.shape;
  p.groupEnds = scanner?.groupEnds;
  if (p.shape.mode === 'spill' && p.shape.reason === 'spread') {
    const noun = o.schema.columns.noun;
    o.plan.warnings.push(
      `the lines of some ${noun}s lie more than ${o.window.toLocaleString('en-US')} rows apart (first near line ${p.shape.row + 1}), so the file was read twice, grouped through temporary spill files; a file that keeps each ${noun}'s lines together is read once.`,
    );
  }
  return result;
}

/** FirstRowsJudge over the first rows, read on their own (the file's first read will not judge them again). */
async function judgeFirstRows<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  o: Opened<U, P>,
  p: Progress,
): Promise<void> {
  const limit = o.options.maxRejectedPercent;
  if (limit === undefined || limit >= 100 || o.format !== 'csv') return;
  try {
    // Most files' first rows have no quotes: read without csv-parse, as csv-parse would read them.
    if (Buffer.byteLength(o.csvRead.delimiter) === 1) {
      await judgeRecords(o, limit, readUnquotedCsvBatches(o.file, o.csvRead));
      p.firstRowsJudged = true;
      return;
    }
  } catch (error) {
    if (!(error instanceof NotUnquotedError)) throw error;
  }
  await judgeRecords(o, limit, readCsvBatches(o.file, o.csvRead)); // judged again from the first row
  p.firstRowsJudged = true;
}

/** FirstRowsJudge over the data records of `batches` until it has judged its rows (throws TOO_MANY_REJECTED). */
async function judgeRecords<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  o: Opened<U, P>,
  limit: number,
  batches: AsyncIterable<(CsvRecord | CsvBadRecord)[]>,
): Promise<void> {
  const judge = new FirstRowsJudge(o.file, limit);
  let header = true;
  for await (const records of batches) {
    for (const record of records) {
      if (header) {
        header = false;
        continue;
      }
      if (record.kind === 'record' && record.values.every((value) => value.trim() === '')) continue;
      const unit = o.schema.csvUnit(record, o.plan, o.rules);
      const own = o.schema.ownErrors(unit);
      judge.add(unit.rows.length, own.rejectedRows, own.errors); // throws TOO_MANY_REJECTED
      if (!judge.judging) break;
    }
    if (!judge.judging) break;
  }
}

/** Gathers records into batches of BATCH_ITEMS, counting them; judges the first rows where the read must. */
class Batcher<U extends GroupedUnit & { rows: readonly unknown[] }, P> {
  #batch: Item<P>[] = [];
  readonly #judge: FirstRowsJudge | undefined;

  constructor(
    private readonly o: Opened<U, P>,
    private readonly p: Progress,
  ) {
    const limit = o.options.maxRejectedPercent;
    this.#judge = limit === undefined || p.firstRowsJudged ? undefined : new FirstRowsJudge(o.file, limit);
  }

  get pending(): number {
    return this.#batch.length;
  }

  /** Judges a unit's own errors while the first rows are judged (throws TOO_MANY_REJECTED). */
  judge(unit: U): void {
    if (this.#judge?.judging !== true) return;
    const own = this.o.schema.ownErrors(unit);
    this.#judge.add(unit.rows.length, own.rejectedRows, own.errors);
  }

  get judging(): boolean {
    return this.#judge?.judging === true;
  }

  /** Counts `items` into the batch under way; true once it is full enough to hand out. */
  counted(items: Iterable<Item<P>>): boolean {
    const stats = this.p.stats;
    for (const item of items) {
      stats.records++;
      if (item.kind === 'valid') stats.valid++;
      else stats.rejected++;
      this.#batch.push(item);
    }
    return this.#batch.length >= BATCH_ITEMS;
  }

  take(): Item<P>[] {
    const out = this.#batch;
    this.#batch = [];
    return out;
  }

  /** A file without rows is refused unless --allow-empty. */
  refuseEmpty(): void {
    const { p, o } = this;
    if (p.stats.rows > 0 || o.options.allowEmpty === true) return;
    const blank = p.blankRows > 0 ? ` (only ${p.blankRows} blank row${p.blankRows === 1 ? '' : 's'})` : '';
    throw new FileRefusedError(
      'FILE_EMPTY',
      o.file,
      `the file has no ${o.schema.columns.noun}s${blank}. An export that came out empty is not a success; check the export, or pass --allow-empty if an empty file is expected.`,
    );
  }
}

function assembleContext(o: Opened<GroupedUnit & { rows: readonly unknown[] }, unknown>): AssembleContext {
  return {
    file: o.file,
    columns: o.plan.columns,
    maxLinesPerOrder: o.maxLinesPerOrder,
    ...(o.options.strictProducts === true ? { strictProducts: true } : {}),
  };
}

/** A CSV file whose groups' rows lie close together: each group is assembled as soon as the window closes it, no spill, no second read. */
async function* streamedBatches<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  o: Opened<U, P>,
  p: Progress,
  shape: { key: ShapeKey; window: number },
): AsyncGenerator<Item<P>[]> {
  const shapeKey = shape.key;
  const out = new Batcher(o, p);
  const context = assembleContext(o);
  sweepStaleSpillDirs(o.options.tmpDir ?? tmpdir()); // what a killed run left, as a spilling start does
  const groups = new StreamGroups<U>(shape.window);
  const fields = shapeKey.fields;
  const cells = new Array<string | undefined>(fields.length);
  const ends = p.groupEnds;
  let keyed = 0; // keyed data rows so far: GroupEnds counts them alike
  let line = 0;
  try {
    for await (const records of csvBatches(readPlainCsvBatches(o.file, o.csvRead), () => p.blankRows++)) {
      for (const record of records) {
        line = record.line;
        const unit = o.schema.csvUnit(record, o.plan, o.rules);
        p.stats.rows += unit.rows.length;
        out.judge(unit);
        for (let i = 0; i < fields.length; i++) cells[i] = record.values[fields[i] ?? -1];
        const text = shapeKey.key(cells);
        const key = text === undefined ? undefined : shapeHashOf(text); // as the scan grouped rows
        const last = ends !== undefined && (key === undefined || ends.has(keyed++));
        const closing = last ? groups.addLast(unit, key) : groups.add(unit, key);
        for (const closed of closing) out.counted(o.schema.assemble(closed, context));
      }
      if (out.pending > 0) yield out.take();
    }
  } catch (error) {
    // Only a file that changed between the shape scan and this read can bring a closed group back.
    if (!(error instanceof GroupCameBackError)) throw error;
    throw new FileRefusedError(
      'FILE_CHANGED_WHILE_READ',
      o.file,
      `line ${line}: an order whose last row the first read had passed came back: the file changed while it was read; import it again once it is complete`,
      { cause: error },
    );
  }
  out.refuseEmpty();
  for (const closed of groups.finish()) if (out.counted(o.schema.assemble(closed, context))) yield out.take();
  if (out.pending > 0) yield out.take();
}

/**
 * Any other file: read whole first into a unit store (in memory for a small file, spilled to temp files
 * for a large one, validated in worker threads where they help), then assembled bucket by bucket.
 */
async function* spilledBatches<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  o: Opened<U, P>,
  p: Progress,
): AsyncGenerator<Item<P>[]> {
  const { schema, options, bucketCount } = o;
  const out = new Batcher(o, p);
  const context = assembleContext(o);
  const codec = schema.codec(o.plan);
  const store = await createUnitStore<U>({
    codec,
    bucketCount,
    ...(options.tmpDir === undefined ? {} : { tmpDir: options.tmpDir }),
    ...(schema.limit === undefined ? {} : { limit: schema.limit(o.maxLinesPerOrder) }),
  });
  let pool: UnitPool | undefined;
  // In a file that spills, a unit its own errors reject is reported now, not spilled (schema.settle).
  const settle = bucketCount > 1 ? schema.settle : undefined;
  try {
    const threads = options.threads ?? defaultIngestThreads();
    if (o.format === 'csv' && bucketCount > 1 && threads > 0 && schema.thread !== undefined) {
      pool = createUnitPool({ threads, schema: schema.thread, plan: o.plan, rules: o.rules, bucketCount });
      for await (const encoded of pool.encode(eachRecord(firstCsvBatches(o, p)))) {
        p.stats.rows += encoded.rows;
        const settled = (encoded.settled ?? []).map((line) => codec.decode(line));
        if (out.judging) {
          for (const line of encoded.lines) out.judge(decodeSpillLine(line, codec));
          for (const unit of settled) out.judge(unit);
        }
        await store.addEncoded(encoded);
        for (const unit of settled) out.counted(schema.assemble([unit], context));
        if (out.pending > 0) yield out.take();
      }
      await pool.close(); // the second pass runs in this thread: free the threads' memory now
    } else if (o.format === 'csv') {
      // A read's records at a time: no promise per row unless the spill writer holds the read back.
      for await (const records of firstCsvBatches(o, p)) {
        for (const record of records) {
          const unit = schema.csvUnit(record, o.plan, o.rules);
          p.stats.rows += unit.rows.length;
          out.judge(unit);
          const early = settle?.(unit);
          if (early === undefined) {
            const wait = store.add(unit);
            if (wait !== undefined) await wait;
            continue;
          }
          if (early.standIn !== undefined) await store.add(early.standIn);
          if (out.counted(schema.assemble([unit], context))) yield out.take();
        }
        if (out.pending > 0) yield out.take();
      }
    } else {
      for await (const unit of jsonUnits(o, o.format, jsonContext(o, p))) {
        p.stats.rows += unit.rows.length;
        out.judge(unit);
        const early = settle?.(unit);
        if (early === undefined) {
          await store.add(unit);
          continue;
        }
        if (early.standIn !== undefined) await store.add(early.standIn);
        if (out.counted(schema.assemble([unit], context))) yield out.take();
      }
      if (out.pending > 0) yield out.take();
    }
    out.refuseEmpty();
    for await (const bucket of store.buckets()) {
      // A bucket's items are made as they are asked for: at most a batch of them is held.
      for (const item of schema.assemble(bucket, context)) if (out.counted([item])) yield out.take();
    }
    if (out.pending > 0) yield out.take();
  } finally {
    await pool?.close();
    await store.dispose();
  }
}

/** What turning a JSON file's elements into units needs. */
function jsonContext<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  o: Opened<U, P>,
  p: Progress,
): JsonUnitContext {
  return { mapping: o.mapping, ignored: p.ignored, maxLinesPerOrder: o.maxLinesPerOrder, rules: o.rules };
}

/**
 * The data records of a CSV file's first read, a read at a time: without csv-parse when the shape scan found the
 * whole file plainly quoted (a `spread` file, which did not stream), else through csv-parse.
 */
function firstCsvBatches<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  o: Opened<U, P>,
  p: Progress,
): AsyncGenerator<(CsvRecord | CsvBadRecord)[]> {
  const plain = p.shape?.mode === 'spill' && p.shape.reason === 'spread' && p.shape.plain;
  const read = plain ? readPlainCsvBatches(o.file, o.csvRead) : readCsvBatches(o.file, o.csvRead);
  return csvBatches(read, () => p.blankRows++);
}

/** The records of batches, one by one (the worker threads' pool takes them so). */
async function* eachRecord(
  batches: AsyncIterable<(CsvRecord | CsvBadRecord)[]>,
): AsyncGenerator<CsvRecord | CsvBadRecord> {
  for await (const records of batches) yield* records;
}

/** csvRecords in batches, from a reader of batches (a file the shape scan passed: readPlainCsvBatches). */
async function* csvBatches(
  batches: AsyncIterable<(CsvRecord | CsvBadRecord)[]>,
  onBlank: () => void,
): AsyncGenerator<(CsvRecord | CsvBadRecord)[]> {
  let header = true;
  for await (const records of batches) {
    const out = records.filter((record, i) => {
      if (header && i === 0) return false;
      if (record.kind === 'record' && record.values.every((value) => value.trim() === '')) {
        onBlank();
        return false;
      }
      return true;
    });
    header = false;
    if (out.length > 0) yield out;
  }
}

async function* jsonUnits<U extends GroupedUnit & { rows: readonly unknown[] }, P>(
  o: Opened<U, P>,
  format: 'json' | 'ndjson',
  context: JsonUnitContext,
): AsyncGenerator<U> {
  const records = format === 'json' ? readJsonArray(o.file, o.jsonRead) : readNdjson(o.file, o.jsonRead);
  for await (const record of records) yield o.schema.jsonUnit(record, context);
}
