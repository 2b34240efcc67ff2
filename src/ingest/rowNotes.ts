/**
 * Notes: what ingest changed in, or wants a person to look at in, a row it accepted. A note
 * with a code is written `line N: <field> <CODE>: <text>`, so reports can count notes by kind
 * (noteCode) without reading their sentences; older notes have no code and count as `other`.
 */
export const ROW_NOTE_CODES = {
  TRIMMED: 'spaces around a value removed',
  LINE_BREAKS_JOINED: 'line breaks inside a text joined with ", "',
  LEADING_ZEROS: 'leading zeros of a number removed (00079 -> 79)',
  PRODUCTS_MERGED:
    'one product on two lines of an order: sent as one line with the summed quantity (--strict-products refuses it)',
  EXCEL_TEXT_UNWRAPPED: 'an Excel ="..." cell (written to keep a leading + or 0) read as the text inside',
  PHONE_UNVERIFIED:
    'a phone number possible for its country but not known to the phone-number metadata: check it (--strict-phone refuses these)',
} as const;

export type RowNoteCode = keyof typeof ROW_NOTE_CODES;

/** A note with a code, in the one format noteCode reads back. */
export function rowNote(line: number, field: string, code: RowNoteCode, text: string): string {
  return `line ${line}: ${field} ${code}: ${text}`;
}

const CODED = /^line \d+: \S+ ([A-Z][A-Z_]+):/;

/** The code of a note written by rowNote, or undefined for an uncoded note. */
export function noteCode(note: string): RowNoteCode | undefined {
  const code = CODED.exec(note)?.[1];
  return code !== undefined && code in ROW_NOTE_CODES ? (code as RowNoteCode) : undefined;
}
