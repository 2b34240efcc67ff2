import { InfrastructureError, UsageError, type BulkorderError } from '../errors.js';
import type { CodeOfExit } from '../errorCodes.js';

/** What a caller says about a file it could not write: its code (exit 5) and what to do about the run. */
export interface WriteFailure {
  /** The code of this kind of file (RESULTS_WRITE_FAILED, JOURNAL_WRITE_FAILED, ...): exit 5. */
  code: CodeOfExit<5>;
  /** What the failure means for the run and how to go on, after "free space" or "make it writable". */
  then: string;
}

/** Errno codes of a path that is wrong as given (a folder missing, a file where a folder should be): exit 2. */
const WRONG_PATH = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ENAMETOOLONG']);
/** Errno codes of a folder this process may not write (read-only, no permission): exit 5, OUTPUT_NOT_WRITABLE. */
const NOT_WRITABLE = new Set(['EROFS', 'EACCES', 'EPERM']);

/** The words a person reads beside an errno. */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large for the file system',
  EIO: 'an input/output error of the device',
  EROFS: 'a read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'its folder does not exist',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'it is a folder',
};

/** The errno of a failed file system call, when it has one. */
function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The error of a file the file system refused, naming the path, the errno and what to do; every
 * write of the product ends here (src/files/). A full disk, a quota, a read-only or forbidden
 * folder: exit 5 (infrastructure: the disk may get space or be made writable, and the same run
 * then goes on), the kind's own code, or OUTPUT_NOT_WRITABLE for a folder it may not write. A path
 * wrong as given (a folder missing): exit 2, OUTPUT_PATH_INVALID. Never an internal error.
 */
export function writeFailure(path: string, error: unknown, failure: WriteFailure): BulkorderError {
  if (error instanceof InfrastructureError || error instanceof UsageError) return error; // said once, where it happened
  const errno = errnoOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const why = errno ?? message;
  const words = errno === undefined ? '' : ERRNO_WORDS[errno];
  const said = `${why}${words === undefined || words === '' ? '' : `: ${words}`}`;
  const details = { path, ...(errno === undefined ? {} : { errno }) };
  if (errno !== undefined && WRONG_PATH.has(errno))
    return new UsageError(
      'OUTPUT_PATH_INVALID',
      `cannot write ${path} (${said}); choose another path or create its folder. ${failure.then}`,
      { cause: error, details },
    );
  if (errno !== undefined && NOT_WRITABLE.has(errno))
    return new InfrastructureError(
      'OUTPUT_NOT_WRITABLE',
      `cannot write ${path} (${said}): make its folder writable for this user, or choose another path. ${failure.then}`,
      { cause: error, details },
    );
  return new InfrastructureError(
    failure.code,
    `could not write ${path} (${said}): free space there (or raise the quota). ${failure.then}`,
    { cause: error, details },
  );
}
