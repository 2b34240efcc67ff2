/**
 * Recognises files that are not text exports at all, so they are refused with what they are and
 * what to export instead, not with advice about text encodings (which would then print binary
 * garbage as "closest headers").
 */

/** What a binary file is, and what to export instead. */
export interface BinaryKind {
  what: string;
  advice: string;
}

const SAVE_AS_CSV = 'Export the orders as "CSV UTF-8 (Comma delimited)" (or JSON) and use that file.';

/** Magic numbers of the files people drop by mistake, checked on the first bytes of a file. */
export function binaryKind(head: Buffer): BinaryKind | undefined {
  const starts = (...bytes: number[]): boolean => bytes.every((byte, i) => head[i] === byte);
  if (starts(0x1f, 0x8b))
    return {
      what: 'a gzip-compressed file',
      advice: `Unpack it first (gunzip ${'<file>'}) and use the CSV or JSON inside.`,
    };
  if (starts(0x50, 0x4b, 0x03, 0x04) || starts(0x50, 0x4b, 0x05, 0x06)) {
    const text = head.toString('latin1');
    if (text.includes('xl/') || text.includes('[Content_Types].xml')) {
      return {
        what: 'an Excel workbook (.xlsx)',
        advice: 'In Excel: File > Save As > "CSV UTF-8 (Comma delimited)", and use that file.',
      };
    }
    return {
      what: 'a ZIP archive',
      advice: `Unpack it first and use the CSV or JSON inside (an Excel .xlsx is a ZIP too: ${SAVE_AS_CSV})`,
    };
  }
  if (starts(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1))
    return {
      what: 'an old Excel workbook (.xls)',
      advice: 'In Excel: File > Save As > "CSV UTF-8 (Comma delimited)", and use that file.',
    };
  if (starts(0x25, 0x50, 0x44, 0x46, 0x2d))
    return { what: 'a PDF document', advice: `A PDF cannot be read as orders. ${SAVE_AS_CSV}` };
  if (starts(0x42, 0x5a, 0x68))
    return { what: 'a bzip2-compressed file', advice: 'Unpack it first and use the CSV or JSON inside.' };
  if (starts(0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c))
    return { what: 'a 7-Zip archive', advice: 'Unpack it first and use the CSV or JSON inside.' };
  if (starts(0x28, 0xb5, 0x2f, 0xfd))
    return { what: 'a zstd-compressed file', advice: 'Unpack it first and use the CSV or JSON inside.' };
  if (looksBinary(head))
    return { what: 'binary data (it holds NUL or other non-text bytes), not a text export', advice: SAVE_AS_CSV };
  return undefined;
}

/**
 * True for bytes no text export holds: any NUL, or C0 controls other than tab, LF, CR, form
 * feed and Ctrl-Z beyond a stray one or two (a cell may hold one; the row is refused for it).
 * `asWindows1252` also counts the five bytes windows-1252 leaves undefined: used before giving
 * the windows-1252 hint, which only helps text that decodes as windows-1252 (in valid UTF-8
 * those bytes are ordinary continuation bytes, so the first check leaves them alone).
 */
export function looksBinary(bytes: Buffer, asWindows1252 = false): boolean {
  let controls = 0;
  for (const byte of bytes) {
    if (byte === 0x00) return true;
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1a) controls++;
    else if (asWindows1252 && (byte === 0x81 || byte === 0x8d || byte === 0x8f || byte === 0x90 || byte === 0x9d))
      controls++;
  }
  return controls > 2 + bytes.length / 1000;
}
