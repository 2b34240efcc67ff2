/**
 * Errors with a stable string `code`. Code branches on `code`, never on the message,
 * and the CLI maps `exitCode` to the process exit status in one place (src/cli.ts).
 */

/** Documented exit codes (README, "Exit codes"). */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  fileRefused: 3,
  needsAttention: 4,
  infrastructure: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** What each exit code means, in the words of `--help` and README; `--json` answers carry it as `exitMeaning`. */
export const EXIT_CODE_MEANINGS: Readonly<Record<ExitCode, string>> = {
  0: 'ok',
  1: 'internal error',
  2: 'usage or configuration error',
  3: 'file refused as a whole',
  4: 'some rows or orders need attention',
  5: 'infrastructure unavailable (Redis, API, token endpoint)',
};

/** The meaning of an exit code (`unknown` for one we never use); above 128, the shell's convention for a signal. */
export function exitMeaning(code: number): string {
  return (
    (EXIT_CODE_MEANINGS as Record<number, string>)[code] ?? (code > 128 ? `stopped by signal ${code - 128}` : 'unknown')
  );
}

export class BulkorderError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  /** Extra facts for logs and JSON output; never secrets. */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: string,
    message: string,
    options: { exitCode?: ExitCode; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = options.exitCode ?? ExitCode.internal;
    this.details = options.details;
  }
}

/** Bad command-line usage or a refused configuration (exit 2). */
export class UsageError extends BulkorderError {
  constructor(code: string, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, { ...options, exitCode: ExitCode.usage });
  }
}

/** A configuration that is missing or refused; names the variable to fix (exit 2). */
export class ConfigError extends UsageError {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super('CONFIG_INVALID', `${variable}: ${message}`, { details: { variable } });
    this.variable = variable;
  }
}

/** An input file refused as a whole: unreadable, wrong columns, wrong encoding (exit 3). */
export class FileRefusedError extends BulkorderError {
  readonly file: string;
  constructor(
    code: string,
    file: string,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, `${file}: ${message}`, { ...options, exitCode: ExitCode.fileRefused });
    this.file = file;
  }
}

/** Redis, the API or the token endpoint is unavailable (exit 5). */
export class InfrastructureError extends BulkorderError {
  constructor(code: string, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, { ...options, exitCode: ExitCode.infrastructure });
  }
}

export function isBulkorderError(error: unknown): error is BulkorderError {
  return error instanceof BulkorderError;
}

/** Errno codes of a folder that stays unwritable until a person changes it (not a disk that may get space). */
const NEVER_WRITABLE = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOENT', 'ENOTDIR', 'EISDIR']);

/**
 * An output file (results, rejects) the file system refused, naming the path: exit 2 when its
 * folder can never be written as set up (read-only, no permission, missing), exit 5 when the disk
 * may get space again (ENOSPC, EDQUOT, EIO). `then` says what to do about the run (from the caller).
 */
export function outputFileError(code: string, path: string, error: unknown, then: string): BulkorderError {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const why = errno ?? (error instanceof Error ? error.message : String(error));
  if (errno !== undefined && NEVER_WRITABLE.has(errno)) {
    return new UsageError(
      'OUTPUT_NOT_WRITABLE',
      `cannot write ${path} (${why}): its folder is read-only, missing or not ours; choose another path or make it writable. ${then}`,
      { cause: error, details: { path, errno } },
    );
  }
  return new InfrastructureError(
    code,
    `could not write ${path} (${why}${errno === 'ENOSPC' ? ': no space left on the device' : ''}). ${then}`,
    { cause: error, details: { path, ...(errno === undefined ? {} : { errno }) } },
  );
}

/**
 * The Redis namespace holds data of a newer bulkorder than this process (its marker's
 * dataVersion is above DATA_VERSION): reading it could misread or damage it (exit 5).
 */
export class DataVersionError extends InfrastructureError {
  constructor(message: string, details: { namespace: string; stored: number; known: number; writtenBy?: string }) {
    super('DATA_VERSION_NEWER', message, { details });
  }
}

/**
 * A job's data this process cannot read: written by a newer bulkorder (`JOB_DATA_NEWER`: its
 * version or packed layout is unknown here) or not of the shape its version says
 * (`JOB_DATA_MALFORMED`). The worker leaves such a job in the queue; it never guesses fields.
 */
export class JobDataError extends BulkorderError {
  declare readonly code: JobDataCode;
  constructor(code: JobDataCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, { details });
  }
}

export type JobDataCode = 'JOB_DATA_NEWER' | 'JOB_DATA_MALFORMED';

/**
 * The Redis namespace forgot what an earlier import of this file relied on (its marker is gone or
 * has another epoch than the import journal names: a Redis restarted without persistence, a
 * FLUSHALL): sending would repeat what was delivered, so the import refuses (exit 5) and says
 * what to do (`--trust-results` or `--force`). src/importer/importJournal.ts decides it.
 */
export class LedgerLostError extends InfrastructureError {
  constructor(message: string, details: Record<string, unknown>) {
    super('LEDGER_LOST', message, { details });
  }
}
