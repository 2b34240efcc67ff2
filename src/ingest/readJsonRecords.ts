import { FileRefusedError } from '../errors.js';
import { decodeFile } from './decodeFile.js';
import type { IngestEncoding } from './types.js';

/** Options for reading JSON or NDJSON records. */
export interface JsonReadOptions {
  /** Default `utf-8`. */
  encoding?: IngestEncoding;
  /** Read size in bytes; default 64 KiB (tests use tiny reads to cross chunk boundaries). */
  chunkBytes?: number;
  /** Longest element or line, in characters; longer ones are reported, not held. Default 64 KiB. */
  maxRecordBytes?: number;
}

/** One array element (or NDJSON line) as text, with the line it starts on. */
export interface JsonRecord {
  kind: 'element';
  line: number;
  text: string;
}

/** An element that exceeded maxRecordBytes; its text was not kept. */
export interface JsonOversize {
  kind: 'oversize';
  line: number;
}

type State = 'start' | 'firstValue' | 'value' | 'inValue' | 'afterValue' | 'done';

/**
 * Streams the elements of a top-level JSON array without holding the file: a small scanner
 * finds where each element starts and ends (following strings and nesting), and each element
 * is then parsed on its own with JSON.parse. A broken structure (no array, a missing comma,
 * a truncated file) refuses the file; a malformed element only spoils itself.
 */
// eslint-disable-next-line max-lines-per-function -- the scanner keeps its state in locals of one per-character loop; every split would cost per character (bench/ validate)
export async function* readJsonArray(
  file: string,
  options: JsonReadOptions = {},
): AsyncGenerator<JsonRecord | JsonOversize> {
  const max = options.maxRecordBytes ?? 64 * 1024;
  // Typed wide on purpose: finish() changes it from inside a closure, which narrowing cannot see.
  let state = 'start' as State;
  let line = 1;
  let lastWasCr = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let scalar = false;
  let parts: string[] = [];
  let size = 0;
  let startLine = 0;
  const refuse = (message: string): FileRefusedError =>
    new FileRefusedError('JSON_INVALID', file, `line ${line}: ${message}`);

  for await (const text of decodeFile(file, options)) {
    const out: (JsonRecord | JsonOversize)[] = [];
    let from = -1; // where the current element's text starts in this chunk
    const finish = (end: number): void => {
      if (size <= max) {
        parts.push(text.slice(Math.max(from, 0), end));
        out.push({ kind: 'element', line: startLine, text: parts.join('') });
      } else {
        out.push({ kind: 'oversize', line: startLine });
      }
      parts = [];
      size = 0;
      from = -1;
      state = 'afterValue';
    };
    if (state === 'inValue') from = 0;

    for (let i = 0; i < text.length; i++) {
      const c = text.charAt(i);
      if (state === 'inValue') {
        size++;
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') {
            inString = false;
            if (depth === 0) finish(i + 1);
          }
        } else if (scalar) {
          if (c === ',' || c === ']' || c === ' ' || c === '\t' || c === '\n' || c === '\r') {
            finish(i);
            i--; // let afterValue see the delimiter
            continue;
          }
        } else if (c === '"') inString = true;
        else if (c === '{' || c === '[') depth++;
        else if (c === '}' || c === ']') {
          depth--;
          if (depth === 0) finish(i + 1);
        }
      } else if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
        // whitespace between tokens
      } else if (state === 'start') {
        if (c !== '[') {
          throw refuse(
            c === '{'
              ? 'the file holds one JSON object, not an array of orders. Wrap it in [ ], or use NDJSON (.ndjson) for one order per line.'
              : `expected "[" (a JSON file must be an array of orders), found "${c}".`,
          );
        }
        state = 'firstValue';
      } else if (state === 'afterValue') {
        if (c === ',') state = 'value';
        else if (c === ']') state = 'done';
        else throw refuse(`expected "," or "]" after an element, found "${c}".`);
      } else if (state === 'firstValue' && c === ']') {
        state = 'done';
      } else if (state === 'value' || state === 'firstValue') {
        if (c === ']') throw refuse('a comma before "]" (trailing commas are not JSON).');
        if (c === ',') throw refuse('an empty element (two commas in a row).');
        state = 'inValue';
        startLine = line;
        from = i;
        size = 1;
        depth = c === '{' || c === '[' ? 1 : 0;
        inString = c === '"';
        escaped = false;
        scalar = !inString && depth === 0;
      } else {
        throw refuse(`unexpected "${c}" after the closing "]".`);
      }
      // Line counting: CRLF, LF and a lone CR each end one line.
      if (c === '\n') {
        if (!lastWasCr) line++;
        lastWasCr = false;
      } else if (c === '\r') {
        line++;
        lastWasCr = true;
      } else lastWasCr = false;
    }
    if (state === 'inValue' && size <= max) parts.push(text.slice(Math.max(from, 0)));
    yield* out;
  }
  if (state === 'inValue' && scalar) {
    throw refuse('the file ends inside the array; is it complete?');
  }
  if (state !== 'done')
    throw refuse(state === 'start' ? 'the file is empty.' : 'the file ends before the closing "]"; is it complete?');
}

/**
 * Streams NDJSON: one JSON value per line, blank lines skipped. Lines end with LF, CRLF or CR.
 * Each line is parsed by the caller, so one bad line spoils only itself.
 */
export async function* readNdjson(
  file: string,
  options: JsonReadOptions = {},
): AsyncGenerator<JsonRecord | JsonOversize> {
  const max = options.maxRecordBytes ?? 64 * 1024;
  let line = 1;
  let parts: string[] = [];
  let size = 0;
  let skipLf = false;
  const record = (): JsonRecord | JsonOversize | undefined => {
    if (size > max) return { kind: 'oversize', line };
    const text = parts.join('');
    return size > 0 && text.trim() !== '' ? { kind: 'element', line, text } : undefined;
  };
  const take = (): JsonRecord | JsonOversize | undefined => {
    const taken = record();
    parts = [];
    size = 0;
    line++;
    return taken;
  };
  for await (const text of decodeFile(file, options)) {
    const out: (JsonRecord | JsonOversize)[] = [];
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      if (c === 0x0a && skipLf && i === from) {
        // the LF of a CRLF whose CR ended the previous read or line
        from = i + 1;
        skipLf = false;
        continue;
      }
      collect(text.slice(from, i));
      const record = take();
      if (record !== undefined) out.push(record);
      skipLf = c === 0x0d;
      from = i + 1;
    }
    if (from < text.length) {
      collect(text.slice(from));
      skipLf = false;
    }
    yield* out;
  }
  const last = take();
  if (last !== undefined) yield last;

  function collect(piece: string): void {
    size += piece.length;
    if (size <= max) parts.push(piece);
  }
}

/** A broken element's message (JSON_SYNTAX): what JSON.parse said, and where its text went. */
/** What a JSON value is, for a message: `an array`, `null`, `string`, `number`... */
export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return value === null ? 'null' : typeof value;
}

export function syntaxMessage(error: unknown): string {
  return `this element is not valid JSON (${(error as Error).message}); the rejects file keeps it as written, in its first column.`;
}
