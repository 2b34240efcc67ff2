import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { FileRefusedError, UsageError } from '../errors.js';
import { decodeFile } from './decodeFile.js';
import type { IngestEncoding, IngestFormat } from './types.js';

/** Why a file cannot be read, by errno code (others are named as they come). */
const UNREADABLE: Partial<Record<string, string>> = { ENOENT: 'no such file', EACCES: 'permission denied' };

/**
 * Whole-file checks every input goes through before its first record: the file exists and is
 * not empty, its extension names a format, its start decodes, and a JSON file starts like one.
 */

/** The format an extension implies; UsageError when it implies none. */
export function formatFromExtension(file: string): IngestFormat {
  const ext = extname(file).toLowerCase();
  if (ext === '.csv' || ext === '.tsv' || ext === '.txt') return 'csv';
  if (ext === '.json') return 'json';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  throw new UsageError(
    'FORMAT_UNKNOWN',
    `cannot tell the format of ${file} from its extension; pass --format csv, json or ndjson.`,
  );
}

export async function fileSize(file: string): Promise<number> {
  let info;
  try {
    info = await stat(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = UNREADABLE[code ?? ''] ?? `cannot be read (${code ?? String(error)})`;
    throw new FileRefusedError('FILE_UNREADABLE', file, why, { cause: error });
  }
  if (!info.isFile()) throw new FileRefusedError('FILE_UNREADABLE', file, 'not a regular file');
  if (info.size === 0) throw new FileRefusedError('FILE_EMPTY', file, 'the file is empty');
  return info.size;
}

/** The first characters of the file (up to maxChars and a bit), decoded and so checked in its encoding. */
export async function readHead(
  file: string,
  encoding: IngestEncoding,
  maxChars: number,
  chunkBytes: number | undefined,
): Promise<{ text: string; whole: boolean }> {
  let text = '';
  for await (const chunk of decodeFile(file, { encoding, ...(chunkBytes ? { chunkBytes } : {}) })) {
    text += chunk;
    if (text.length > maxChars) return { text, whole: false };
  }
  if (text.trim() === '') throw new FileRefusedError('FILE_EMPTY', file, 'the file holds no data (only blank lines)');
  return { text, whole: true };
}

export function checkJsonStart(file: string, format: 'json' | 'ndjson', head: string, noun: string): void {
  const first = head.trimStart()[0];
  if (format === 'json' && first !== '[') {
    throw new FileRefusedError(
      'JSON_INVALID',
      file,
      first === '{'
        ? `the file starts with "{": a .json file must be an array of ${noun}s ([ {...}, {...} ]). For one ${noun} per line, name it .ndjson.`
        : `a .json file must be an array of ${noun}s, starting with "[".`,
    );
  }
  if (format === 'ndjson' && first !== '{') {
    throw new FileRefusedError(
      'JSON_INVALID',
      file,
      first === '['
        ? `the file starts with "[": NDJSON has one ${noun} object per line. For an array of ${noun}s, name it .json or pass --format json.`
        : 'NDJSON needs one JSON object per line, starting with "{".',
    );
  }
}
