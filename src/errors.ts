/**
 * Errors with a stable string `code`. Code branches on `code`, never on the message,
 * and the CLI maps `exitCode` to the process exit status in one place (src/cli.ts).
 */

import { ExitCode, exitCodeOf, type CodeOfExit, type ErrorCode, type PassedOnCode } from './errorCodes.js';

// The exit codes are described in the catalogue with the error codes; importers of errors.ts keep finding them here.
export { EXIT_CODE_MEANINGS, ExitCode, exitMeaning } from './errorCodes.js';

/** Extra options of every error: the cause and facts for logs and JSON output. */
interface ErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
}

/**
 * An error with a code of the catalogue (src/errorCodes.ts), or one passed on as it came (the
 * remote API's). Its exit code is the catalogue's for the code unless given (a passed-on code has
 * none: the caller says what it means here), else 1.
 */
export class BulkorderError extends Error {
  readonly code: ErrorCode | PassedOnCode;
  readonly exitCode: ExitCode;
  /** Extra facts for logs and JSON output; never secrets. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode | PassedOnCode, message: string, options: ErrorOptions & { exitCode?: ExitCode } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = options.exitCode ?? exitCodeOf(code) ?? ExitCode.internal;
    this.details = options.details;
  }
}

/** Bad command-line usage or a refused configuration (exit 2): a code the catalogue gives exit 2. */
export class UsageError extends BulkorderError {
  constructor(code: CodeOfExit<2> | PassedOnCode, message: string, options: ErrorOptions = {}) {
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
  constructor(code: CodeOfExit<3>, file: string, message: string, options: ErrorOptions = {}) {
    super(code, `${file}: ${message}`, { ...options, exitCode: ExitCode.fileRefused });
    this.file = file;
  }
}

/** Redis, the API or the token endpoint is unavailable (exit 5). */
export class InfrastructureError extends BulkorderError {
  constructor(code: CodeOfExit<5> | PassedOnCode, message: string, options: ErrorOptions = {}) {
    super(code, message, { ...options, exitCode: ExitCode.infrastructure });
  }
}

export function isBulkorderError(error: unknown): error is BulkorderError {
  return error instanceof BulkorderError;
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

export type JobDataCode = Extract<ErrorCode, 'JOB_DATA_NEWER' | 'JOB_DATA_MALFORMED'>;

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

/**
 * `value`, which the caller has proven present (an index a line above checked, a key the same
 * function set); throws INTERNAL naming `what` if that proof is ever wrong, instead of a `!`
 * that would let `undefined` travel on.
 */
export function defined<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new BulkorderError('INTERNAL', `internal: ${what} is missing`);
  return value;
}
