/**
 * Notes: what ingest changed in, or wants a person to look at in, a row it accepted. A note
 * with a code is written `line N: <field> <CODE>: <text>`, so reports can count notes by kind
 * (noteCode) without reading their sentences; older notes have no code and count as `other`.
 * The codes and what they mean are in the catalogue (src/errorCodes.ts, seen as `note`).
 */
import { ERROR_CODES, isErrorCode, type NoteCode } from '../errorCodes.js';

/** A note with a code, in the one format noteCode reads back. */
export function rowNote(line: number, field: string, code: NoteCode, text: string): string {
  return `line ${line}: ${field} ${code}: ${text}`;
}

const CODED = /^line \d+: \S+ ([A-Z][A-Z_]+):/;

/** The code of a note written by rowNote, or undefined for an uncoded note. */
export function noteCode(note: string): NoteCode | undefined {
  const code = CODED.exec(note)?.[1];
  if (code === undefined || !isErrorCode(code)) return undefined;
  return (ERROR_CODES[code].seen as readonly string[]).includes('note') ? (code as NoteCode) : undefined;
}
