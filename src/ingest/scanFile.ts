import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { FileRefusedError } from '../errors.js';
import type { ShapeScanner, ShapeVerdict } from './shapeScan.js';

/** What one pass over a file's bytes tells before anything of it is queued. */
export interface FileScan {
  /** Present when asked for (`sha256: true`). */
  readonly sha256: string | undefined;
  /** The first NUL byte, if any (no encoding we read has one in text). */
  readonly nul: { readonly line: number; readonly offset: number } | undefined;
  /** Whether the file can be grouped in one stream, when a ShapeScanner was given. */
  readonly shape: ShapeVerdict | undefined;
}

/** What scanFile looks at; it stops reading once nothing asked for needs more bytes. */
export interface ScanOptions {
  /** Hash the whole file (the batch record keeps it). */
  sha256?: boolean;
  /** Look for a NUL byte; default true. */
  nul?: boolean;
  /** Follow the file's groups (openRecordSource makes it for a large CSV file). */
  shape?: ShapeScanner;
}

/** Reads the file's bytes once: its hash, its first NUL byte and its shape, as asked. */
export async function scanFile(file: string, options: ScanOptions = {}): Promise<FileScan> {
  const hash = options.sha256 === true ? createHash('sha256') : undefined;
  const shape = options.shape;
  let lookForNul = options.nul !== false;
  let nul: FileScan['nul'];
  let offset = 0;
  let line = 1;
  // One buffer, read into again and again: a new one per read left megabytes of garbage outside the heap.
  const buffer = Buffer.allocUnsafe(64 * 1024);
  const handle = await open(file, 'r');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const bytes = buffer.subarray(0, bytesRead);
      hash?.update(bytes);
      if (lookForNul) {
        const at = bytes.indexOf(0);
        const upTo = at === -1 ? bytes : bytes.subarray(0, at);
        for (let i = upTo.indexOf(10); i !== -1; i = upTo.indexOf(10, i + 1)) line++;
        if (at !== -1) {
          nul = { line, offset: offset + at };
          lookForNul = false;
        }
      }
      shape?.push(bytes);
      offset += bytes.length;
      // A NUL refuses the file: its shape no longer matters.
      if (hash === undefined && (nul !== undefined || (!lookForNul && (shape === undefined || shape.decided)))) break;
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash?.digest('hex'), nul, shape: shape?.end() };
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
