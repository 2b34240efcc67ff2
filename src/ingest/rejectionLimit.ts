import { FileRefusedError, UsageError } from '../errors.js';
import { meaningOf } from '../errorCodes.js';
import type { RecordItem, RowError } from './types.js';
import { ValidationSummary, type ErrorKind } from './validationSummary.js';

/** Default `--max-rejected`: a file is refused when more than half of its first rows are rejected. */
const DEFAULT_MAX_REJECTED_PERCENT = 50;
/** Rows judged before anything is passed on (BigQuery's max_bad_records idea, as a share of a sample). */
const REJECTION_SAMPLE_ROWS = 10_000;

/** Parses `--max-rejected`: `50%` or `50`, 0 to 100; `100%` never refuses. */
export function parseMaxRejected(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(value);
  const percent = match === null ? Number.NaN : Number(match[1]);
  if (!(percent >= 0 && percent <= 100)) {
    throw new UsageError(
      'MAX_REJECTED_INVALID',
      `--max-rejected must be a share from 0% to 100%, e.g. 50% (got "${value}").`,
    );
  }
  return percent;
}

/**
 * `options` with `maxRejectedPercent` set (the default when absent), so the source judges its first
 * read (FirstRowsJudge) the way limitRejectionBatches judges its records.
 */
export function withRejectionLimit<O extends { maxRejectedPercent?: number }>(options: O): O {
  return { ...options, maxRejectedPercent: options.maxRejectedPercent ?? DEFAULT_MAX_REJECTED_PERCENT };
}

/**
 * Passes batches of records (RecordSource.batches()) on unchanged, but holds back the first
 * `sampleRows` rows' worth of records (with `holdValid: false` only the rejected ones) and judges
 * them first: when more than `maxPercent` of those rows are rejected, throws FileRefusedError
 * TOO_MANY_REJECTED (exit 3) naming the top error kinds, before the caller has queued or written anything. Files with fewer rows are never judged: their rejects are
 * few, and the summary already lists them. Holding back ~10,000 rows costs a few MB; the judgement is
 * on rows as records come out (the order of groups closing or of buckets, not strictly file order).
 */
export async function* limitRejectionBatches<T extends RecordItem<unknown>>(
  batches: AsyncIterable<T[]>,
  file: string,
  maxPercent = DEFAULT_MAX_REJECTED_PERCENT,
  options: { sampleRows?: number; holdValid?: boolean } = {},
): AsyncGenerator<T[]> {
  if (maxPercent >= 100) {
    yield* batches;
    return;
  }
  const sampleRows = options.sampleRows ?? REJECTION_SAMPLE_ROWS;
  // validate writes nothing for a valid record (it only counts it): only the rejected ones need holding back.
  const holdValid = options.holdValid ?? true;
  const held: T[][] = [];
  const sample = new ValidationSummary(3);
  let judged = false;
  for await (const batch of batches) {
    if (judged) {
      yield batch;
      continue;
    }
    // Exactly the first records that reach sampleRows rows are judged, wherever a batch ends.
    for (const item of batch) {
      if (sample.rows >= sampleRows) break;
      sample.add(item);
    }
    if (holdValid) held.push(batch);
    else {
      const valid = batch.filter((item) => item.kind === 'valid');
      if (valid.length > 0) yield valid;
      if (valid.length < batch.length) held.push(batch.filter((item) => item.kind !== 'valid'));
    }
    if (sample.rows < sampleRows) continue;
    judge({ rows: sample.rows, rejectedRows: sample.rejectedRows, kinds: sample.errorKinds(3) }, file, maxPercent);
    judged = true;
    yield* held;
    held.length = 0;
  }
  yield* held;
}

/**
 * The same judgement during the first read of a file, in file order, before anything is spilled:
 * a row whose own errors reject it (a bad email, an unreadable record) is certain to be rejected
 * whatever the rest of its order holds, so when more than `maxPercent` of the first `sampleRows`
 * rows are certainly rejected the file is refused there, after ~10,000 rows, instead of after
 * reading and spilling all of it. Rows rejected only through their order (another line of the
 * order is wrong, recipients differ) are counted later, by limitRejectionBatches on the records.
 */
export class FirstRowsJudge {
  #rows = 0;
  #rejectedRows = 0;
  #done = false;
  readonly #kinds = new Map<string, ErrorKind>();

  constructor(
    private readonly file: string,
    private readonly maxPercent: number,
    private readonly sampleRows = REJECTION_SAMPLE_ROWS,
  ) {
    this.#done = maxPercent >= 100;
  }

  /** Counts one first-pass unit: its rows, how many of them its own errors reject, and those errors. Throws TOO_MANY_REJECTED. */
  add(rows: number, rejectedRows: number, errors: readonly RowError[]): void {
    if (this.#done) return;
    this.#rows += rows;
    this.#rejectedRows += rejectedRows;
    for (const error of errors) {
      const id = `${error.code}\u0000${error.column ?? ''}`;
      const kind = this.#kinds.get(id);
      if (kind !== undefined) kind.count++;
      else
        this.#kinds.set(id, {
          code: error.code,
          ...(error.column === undefined ? {} : { column: error.column }),
          count: 1,
          description: meaningOf(error.code) ?? error.code,
        });
    }
    if (this.#rows < this.sampleRows) return;
    this.#done = true;
    const kinds = [...this.#kinds.values()]
      .sort((a, b) => b.count - a.count || a.code.localeCompare(b.code))
      .slice(0, 3);
    this.#kinds.clear();
    judge({ rows: this.#rows, rejectedRows: this.#rejectedRows, kinds }, this.file, this.maxPercent);
  }

  /** False once the sample is judged (or with 100%): the caller may skip working out a unit's errors. */
  get judging(): boolean {
    return !this.#done;
  }
}

interface Sample {
  rows: number;
  rejectedRows: number;
  /** The top error kinds, most frequent first. */
  kinds: ErrorKind[];
}

function judge(sample: Sample, file: string, maxPercent: number): void {
  const percent = (sample.rejectedRows / sample.rows) * 100;
  if (percent <= maxPercent) return;
  const kinds = sample.kinds;
  const top = kinds.map((k) => `${k.count} ${k.code}${k.column === undefined ? '' : ` (${k.column})`}`).join(', ');
  throw new FileRefusedError(
    'TOO_MANY_REJECTED',
    file,
    `${sample.rejectedRows} of the first ${sample.rows} rows (${round(percent)}%) were rejected, more than the allowed ${round(maxPercent)}%; top error kinds: ${top}. ` +
      'Nothing was queued. Fix the export (wrong file, columns or mapping?), or pass --max-rejected 100% to import the valid rows anyway.',
    {
      details: {
        rows: sample.rows,
        rejectedRows: sample.rejectedRows,
        maxRejectedPercent: maxPercent,
        errorKinds: kinds,
      },
    },
  );
}

function round(percent: number): string {
  return String(Math.round(percent * 10) / 10);
}
