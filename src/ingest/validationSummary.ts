import { meaningOf } from '../errorCodes.js';
import { noteCode } from './rowNotes.js';
import type { RecordItem, RowError } from './types.js';

/** One kind of error and how often it occurred. */
export interface ErrorKind {
  code: string;
  /** The field, when the error is about one. */
  column?: string;
  count: number;
  /** What the code means (the catalogue, src/errorCodes.ts). */
  description: string;
}

/** One kind of note (a normalisation, or something to check) and how often it occurred. */
export interface NoteKind {
  /** A note's code (NoteCode), or `other` for uncoded notes (recasing, E.164 spacing, apostrophes). */
  code: string;
  count: number;
  description: string;
}

/** The machine form of a summary (`validate --json`, import results). */
export interface ValidationSummaryJson {
  rows: number;
  orders: number;
  valid: number;
  rejected: number;
  rejectedRows: number;
  errors: number;
  errorKinds: ErrorKind[];
  /** The first errors, values already masked. */
  firstErrors: RowError[];
  normalisations: number;
  noteKinds: NoteKind[];
  /** The first notes of each kind. */
  firstNotes: string[];
}

/** Extra facts the text form can show. */
export interface SummaryContext {
  file?: string;
  format?: string;
  delimiter?: string;
  encoding?: string;
  rejectsPath?: string | undefined;
  ignoredColumns?: readonly string[];
  blankRows?: number;
  warnings?: readonly string[];
}

/**
 * Counts and top error kinds over a stream of ingest items. `validate` and `import` both feed
 * every item through one of these, so they report alike. Memory is bounded: only counts per
 * kind and the first few errors and notes are kept.
 */
export class ValidationSummary {
  rows = 0;
  orders = 0;
  valid = 0;
  rejected = 0;
  rejectedRows = 0;
  errors = 0;
  normalisations = 0;
  private readonly kinds = new Map<string, ErrorKind>();
  private readonly firstErrors: RowError[] = [];
  private readonly noteKinds = new Map<string, { count: number; first: string[] }>();

  /** `noun` names the records in the text form: `order` (default) or `account`. */
  constructor(
    private readonly keep = 10,
    private readonly noun = 'order',
  ) {}

  add(item: RecordItem<unknown>): void {
    this.orders++;
    this.rows += item.rows.length;
    if (item.kind === 'valid') {
      this.valid++;
      this.normalisations += item.notes.length;
      for (const note of item.notes) {
        const code = noteCode(note) ?? 'other';
        const kind = this.noteKinds.get(code) ?? { count: 0, first: [] };
        kind.count++;
        if (kind.first.length < 3) kind.first.push(note);
        this.noteKinds.set(code, kind);
      }
      return;
    }
    this.rejected++;
    this.rejectedRows += item.rows.length;
    for (const error of item.errors) {
      this.errors++;
      const id = `${error.code}\u0000${error.column ?? ''}`;
      const kind = this.kinds.get(id);
      if (kind !== undefined) kind.count++;
      else {
        const description = meaningOf(error.code) ?? error.code;
        this.kinds.set(id, {
          code: error.code,
          ...(error.column === undefined ? {} : { column: error.column }),
          count: 1,
          description,
        });
      }
      if (this.firstErrors.length < this.keep)
        this.firstErrors.push({ ...error, message: `${item.file}:${error.line}: ${error.message}` });
    }
  }

  /** Error kinds, most frequent first. */
  errorKinds(limit = this.keep): ErrorKind[] {
    return [...this.kinds.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)).slice(0, limit);
  }

  /** Note kinds, PHONE_UNVERIFIED (the one a person should act on) first, then most frequent. */
  noteKindList(): NoteKind[] {
    const describe = (code: string): string =>
      meaningOf(code) ?? 'recasing of country and language codes, E.164 spacing of phone numbers, removed apostrophes';
    return [...this.noteKinds.entries()]
      .map(([code, kind]) => ({ code, count: kind.count, description: describe(code) }))
      .sort(
        (a, b) =>
          Number(b.code === 'PHONE_UNVERIFIED') - Number(a.code === 'PHONE_UNVERIFIED') ||
          b.count - a.count ||
          a.code.localeCompare(b.code),
      );
  }

  /** How many notes of one code. */
  noteCount(code: string): number {
    return this.noteKinds.get(code)?.count ?? 0;
  }

  toJSON(): ValidationSummaryJson {
    return {
      rows: this.rows,
      orders: this.orders,
      valid: this.valid,
      rejected: this.rejected,
      rejectedRows: this.rejectedRows,
      errors: this.errors,
      errorKinds: this.errorKinds(Number.POSITIVE_INFINITY),
      firstErrors: [...this.firstErrors],
      normalisations: this.normalisations,
      noteKinds: this.noteKindList(),
      firstNotes: this.noteKindList().flatMap((kind) => this.noteKinds.get(kind.code)?.first ?? []),
    };
  }

  /** The human form, for a terminal. */
  formatText(context: SummaryContext = {}): string {
    const out: string[] = [];
    if (context.file !== undefined) {
      const how = [
        context.format,
        context.format === 'csv' && context.delimiter !== undefined
          ? `delimiter ${delimiterName(context.delimiter)}`
          : undefined,
        context.encoding,
      ]
        .filter(Boolean)
        .join(', ');
      out.push(`${context.file}${how === '' ? '' : ` (${how})`}`);
    }
    const width = String(Math.max(this.rows, this.orders)).length;
    const n = (value: number): string => String(value).padStart(width);
    out.push(`  rows      ${n(this.rows)}${context.blankRows ? `  (+${context.blankRows} blank, skipped)` : ''}`);
    out.push(`  ${`${this.noun}s`.padEnd(9)} ${n(this.orders)}`);
    out.push(`  valid     ${n(this.valid)}`);
    out.push(
      `  rejected  ${n(this.rejected)}${this.rejected > 0 ? `  (${this.rejectedRows} row${this.rejectedRows === 1 ? '' : 's'})` : ''}`,
    );
    const kinds = this.errorKinds();
    if (kinds.length > 0) {
      out.push('', 'Top error kinds:');
      const label = (k: ErrorKind): string => `${k.code}${k.column === undefined ? '' : ` (${k.column})`}`;
      const pad = Math.max(...kinds.map((k) => label(k).length));
      for (const kind of kinds)
        out.push(`  ${String(kind.count).padStart(5)}  ${label(kind).padEnd(pad)}  ${kind.description}`);
      out.push('', 'First errors:');
      for (const error of this.firstErrors) out.push(`  ${error.message}`);
    }
    if (this.normalisations > 0) {
      out.push('', `Notes on valid ${this.noun}s (${this.normalisations}): accepted, but changed or worth a look:`);
      const pad = Math.max(...this.noteKindList().map((k) => k.code.length));
      for (const kind of this.noteKindList()) {
        out.push(`  ${String(kind.count).padStart(5)}  ${kind.code.padEnd(pad)}  ${kind.description}`);
        for (const note of this.noteKinds.get(kind.code)?.first ?? []) out.push(`         ${note}`);
      }
    }
    if (context.ignoredColumns !== undefined && context.ignoredColumns.length > 0) {
      out.push(
        '',
        `Ignored columns (not part of an ${this.noun}): ${context.ignoredColumns.map((c) => `"${c}"`).join(', ')}`,
      );
    }
    for (const warning of context.warnings ?? []) out.push('', `Note: ${warning}`);
    if (context.rejectsPath !== undefined)
      out.push('', `Rejected rows written to ${context.rejectsPath}: fix them there and import that file.`);
    return out.join('\n') + '\n';
  }
}

function delimiterName(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : `"${delimiter}"`;
}
