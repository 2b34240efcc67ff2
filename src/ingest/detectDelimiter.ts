/** Delimiters we detect; any other single character can still be given with --delimiter. */
const DETECTED_DELIMITERS = [',', ';', '\t', '|'] as const;

/**
 * Excel's `sep=;` first line (written by Excel and read by it to pick the delimiter): the
 * delimiter it names and the length of that line with its line ending, or undefined.
 */
export function sepLine(text: string): { delimiter: string; length: number } | undefined {
  const match = /^\uFEFF?"?sep=([^\r\n"])"?[ \t]*(\r\n|\n|\r)/i.exec(text);
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- group 1 is not optional: a match has it
  return match === null ? undefined : { delimiter: match[1]!, length: match[0].length };
}

/**
 * For a header that reads as one column: the character most likely to be its delimiter (the
 * most frequent punctuation outside quotes, other than those a header name holds), if any.
 */
export function otherDelimiter(header: string): string | undefined {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const c of header) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && /[^\p{L}\p{N}\s_\-.()"'/#]/u.test(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const [best] = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  return best === undefined || best[1] < 2 ? undefined : best[0];
}

/**
 * The first physical record of a CSV text (the header), without its line ending. Quoted
 * header names may contain line breaks, so quotes are followed. Returns undefined when the
 * text holds no complete header line yet (and is not the whole file).
 */
export function headerLine(text: string, isWholeFile: boolean): string | undefined {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) return text.slice(0, i);
  }
  return isWholeFile ? text : undefined;
}

/**
 * Picks the delimiter from the header line: the most frequent of `,` `;` tab `|` outside quotes.
 * Excel in Dutch or German locales writes `;`, so a comma default alone would misread them.
 * Falls back to `,` for a one-column header (which then fails the required-columns check
 * with a clear message).
 */
export function detectDelimiter(header: string): string {
  const counts = new Map<string, number>(DETECTED_DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const c of header) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && counts.has(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let best = ',';
  let bestCount = 0;
  for (const [delimiter, count] of counts) {
    if (count > bestCount) {
      best = delimiter;
      bestCount = count;
    }
  }
  return best;
}
