import { FileRefusedError, UsageError } from '../errors.js';
import type { RecordItem } from './types.js';
import { ValidationSummary } from './validationSummary.js';

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
 * Passes `items` on unchanged, but holds back the first `sampleRows` rows' worth of records and
 * judges them first: when more than `maxPercent` of those rows are rejected, throws
 * FileRefusedError TOO_MANY_REJECTED (exit 3) naming the top error kinds, before the caller has
 * queued or written anything. Files with fewer rows are never judged: their rejects are few, and
 * the summary already lists them. Holding back ~10,000 rows costs a few MB; the judgement is on
 * rows as items come out (bucket order, not strictly file order).
 */
export async function* limitRejections<T extends RecordItem<unknown>>(
  items: AsyncIterable<T>,
  file: string,
  maxPercent = DEFAULT_MAX_REJECTED_PERCENT,
  sampleRows = REJECTION_SAMPLE_ROWS,
): AsyncGenerator<T> {
  if (maxPercent >= 100) {
    yield* items;
    return;
  }
  const held: T[] = [];
  const sample = new ValidationSummary(3);
  let judged = false;
  for await (const item of items) {
    if (judged) {
      yield item;
      continue;
    }
    held.push(item);
    sample.add(item);
    if (sample.rows < sampleRows) continue;
    judge(sample, file, maxPercent);
    judged = true;
    yield* held;
    held.length = 0;
  }
  yield* held;
}

function judge(sample: ValidationSummary, file: string, maxPercent: number): void {
  const percent = (sample.rejectedRows / sample.rows) * 100;
  if (percent <= maxPercent) return;
  const kinds = sample.errorKinds(3);
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
