import { stat } from 'node:fs/promises';
import { FileRefusedError } from '../errors.js';

/** What says a file is still the one an import began to read: its inode, size and modification time. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** The file's identity now (one stat). */
export async function fileIdentity(file: string): Promise<FileIdentity> {
  const s = await stat(file);
  return { dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
}

/**
 * Refuses the file (FILE_CHANGED_WHILE_READ, exit 3) when it is no longer what the import began
 * to read: it grew, shrank, was written to (mtime) or replaced (another inode), or is gone.
 */
export async function assertUnchanged(file: string, before: FileIdentity, when: 'scanned' | 'imported'): Promise<void> {
  let now: FileIdentity | undefined;
  try {
    now = await fileIdentity(file);
  } catch {
    now = undefined;
  }
  if (
    now !== undefined &&
    now.dev === before.dev &&
    now.ino === before.ino &&
    now.size === before.size &&
    now.mtimeMs === before.mtimeMs
  )
    return;
  const what = howChanged(before, now);
  throw new FileRefusedError(
    'FILE_CHANGED_WHILE_READ',
    file,
    when === 'scanned'
      ? `the file ${what} while it was read: it is still being written, so nothing of it was queued; import it again once it is complete`
      : `the file ${what} while it was imported: it is still being written, so none of it is sent (its batch is cancelled: what it queued ends BATCH_CANCELLED, never sent); import it again once it is complete (nothing is sent twice)`,
  );
}

/** What happened to a file since its identity was taken, in a person's words. */
function howChanged(before: FileIdentity, now: FileIdentity | undefined): string {
  if (now === undefined) return 'is gone';
  if (now.ino !== before.ino || now.dev !== before.dev) return 'was replaced by another file';
  if (now.size !== before.size) return `changed size from ${before.size} to ${now.size} bytes`;
  return 'was written to (its modification time changed)';
}
