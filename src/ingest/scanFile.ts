import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { FileRefusedError } from '../errors.js';

/** What one pass over a file's bytes tells before anything of it is queued. */
export interface FileScan {
  readonly sha256: string;
  /** The first NUL byte, if any (no encoding we read has one in text). */
  readonly nul: { readonly line: number; readonly offset: number } | undefined;
}

/** Hashes the file and finds its first NUL byte, in one read. */
export async function scanFile(file: string): Promise<FileScan> {
  const hash = createHash('sha256');
  let nul: FileScan['nul'];
  let offset = 0;
  let line = 1;
  for await (const chunk of createReadStream(file)) {
    const bytes = chunk as Buffer;
    hash.update(bytes);
    if (nul === undefined) {
      const at = bytes.indexOf(0);
      const upTo = at === -1 ? bytes : bytes.subarray(0, at);
      for (let i = upTo.indexOf(10); i !== -1; i = upTo.indexOf(10, i + 1)) line++;
      if (at !== -1) nul = { line, offset: offset + at };
    }
    offset += bytes.length;
  }
  return { sha256: hash.digest('hex'), nul };
}

/**
 * Refuses a file with a NUL byte anywhere, as a whole (exit 3): a NUL after row 1,334 used to
 * reject that row and queue the rows before it, while the README promises the whole file refused.
 */
export function refuseNul(file: string, scan: FileScan): void {
  if (scan.nul === undefined) return;
  throw new FileRefusedError(
    'FILE_NOT_TEXT',
    file,
    `line ${scan.nul.line} holds a NUL byte (byte offset ${scan.nul.offset}): the file is damaged or not a text export, so none of it was queued. Export the orders again as "CSV UTF-8 (Comma delimited)" (or JSON) and use that file.`,
    { details: { line: scan.nul.line, offset: scan.nul.offset } },
  );
}
