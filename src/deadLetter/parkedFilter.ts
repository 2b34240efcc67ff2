import { UsageError } from '../errors.js';
import type { ParkedRecord } from '../deliveryJob.js';

/** Which parked records (dead letters or held orders) a command works on. Every field is optional; all given must match. */
export interface ParkedFilter {
  /** Only these order keys. */
  keys?: readonly string[];
  /** Only records parked by this batch. */
  batchId?: string;
  /** Only this HTTP status (`none` for records without one, e.g. no answer). */
  httpStatus?: number | 'none';
  /** Only this error code (exact, case-insensitive). */
  code?: string;
  /** Parked at least this long ago (ms). */
  olderThanMs?: number;
  /** Parked at most this long ago (ms). */
  newerThanMs?: number;
  /** Only this cause: HTTP status, code and message together ({@link causeId}; the dashboard's groups). */
  cause?: string;
}

/** The filter flags `dead-letters` and `review` share, as commander hands them over. */
export interface ParkedFilterFlags {
  batch?: string;
  status?: string;
  code?: string;
  olderThan?: string;
  newerThan?: string;
  /** A {@link causeId} (the dashboard's groups; no CLI flag). */
  cause?: string;
}

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** `90s`, `30m`, `12h`, `7d`, `2w` -> milliseconds; UsageError naming the flag otherwise. */
function parseAge(text: string, flag: string): number {
  const match = /^(\d+)\s*([smhdw])$/i.exec(text.trim());
  if (match === null)
    throw new UsageError('AGE_INVALID', `${flag} takes an age like 30m, 12h, 7d or 2w (got '${text}').`);
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- the match has group 2, one of UNIT_MS' keys
  return Number(match[1]) * UNIT_MS[match[2]!.toLowerCase()]!;
}

/** Turns the shared flags (and any order keys given as arguments) into a filter; bad values are usage errors (exit 2). */
export function parkedFilterFromFlags(flags: ParkedFilterFlags, keys: readonly string[] = []): ParkedFilter {
  const filter: ParkedFilter = {};
  if (keys.length > 0) filter.keys = keys;
  if (flags.batch !== undefined) filter.batchId = flags.batch;
  if (flags.status !== undefined) {
    const status = flags.status.toLowerCase() === 'none' ? 'none' : Number(flags.status);
    if (status !== 'none' && !(Number.isInteger(status) && status >= 100 && status <= 599)) {
      throw new UsageError(
        'STATUS_INVALID',
        `--status takes an HTTP status (100-599) or 'none' (got '${flags.status}').`,
      );
    }
    filter.httpStatus = status;
  }
  if (flags.code !== undefined) filter.code = flags.code;
  if (flags.olderThan !== undefined) filter.olderThanMs = parseAge(flags.olderThan, '--older-than');
  if (flags.newerThan !== undefined) filter.newerThanMs = parseAge(flags.newerThan, '--newer-than');
  if (flags.cause !== undefined) filter.cause = flags.cause;
  return filter;
}

/** True when the filter names nothing: commands that change state ask for `--all` then. */
export function isEmptyFilter(filter: ParkedFilter): boolean {
  return Object.keys(filter).length === 0;
}

/** Does one record pass the filter? (Age is applied on the index scores, before records are read.) */
export function matchesFilter(
  record: Pick<ParkedRecord, 'key' | 'batchId' | 'httpStatus' | 'code' | 'message'>,
  filter: ParkedFilter,
): boolean {
  if (filter.cause !== undefined && causeId(record) !== filter.cause) return false;
  if (filter.keys !== undefined && !filter.keys.includes(record.key)) return false;
  if (filter.batchId !== undefined && record.batchId !== filter.batchId) return false;
  if (filter.httpStatus !== undefined) {
    if (filter.httpStatus === 'none' ? record.httpStatus !== undefined : record.httpStatus !== filter.httpStatus)
      return false;
  }
  if (filter.code !== undefined && (record.code ?? '').toLowerCase() !== filter.code.toLowerCase()) return false;
  return true;
}

/** One string per cause: the API's HTTP status, error code and message together. */
export function causeId(cause: Pick<ParkedRecord, 'httpStatus' | 'code' | 'message'>): string {
  return JSON.stringify([cause.httpStatus ?? null, cause.code ?? null, cause.message ?? null]);
}
