import { rename } from 'node:fs/promises';
import { writeFailure, type WriteFailure } from './writeFailure.js';

/**
 * Renames `from` to `to` (atomic within one file system: a reader sees the file under one name or
 * the other, never half). A refusal of the file system throws writeFailure's error naming `to`.
 * `missingOk`: a `from` that is not there is no error (returns false).
 */
export async function moveFile(
  from: string,
  to: string,
  failure: WriteFailure,
  options: { missingOk?: boolean } = {},
): Promise<boolean> {
  try {
    await rename(from, to);
    return true;
  } catch (error) {
    if (options.missingOk === true && (error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw writeFailure(to, error, failure);
  }
}
