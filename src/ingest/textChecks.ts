import { z } from 'zod';
import { isLanguageCode } from '../reference/isoCodes.js';
import type { RowErrorCode } from '../errorCodes.js';

/**
 * Field checks every record kind shares (orders and employee accounts), so the same mistake
 * gets the same code and the same advice whatever the file is.
 */

/** A problem with one value: the code and the sentence that follows the field name. */
export interface ValueProblem {
  code: RowErrorCode;
  message: string;
}

// zod's email check (a practical subset of RFC 5322: no quoted local parts, no IP literals).
const emailSchema = z.email();

/**
 * Text a spreadsheet would run as a formula: `=` anything, or + - @ followed by a function call
 * (`@SUM(`), a cell reference (`+A1`), arithmetic (`-2+3`) or a DDE command (`+cmd|`). Names like
 * "@home" or "-" alone are not formulas.
 */
const FORMULA = /^(=|[+\-@]\s*([A-Za-z_][\w.]*\s*\(|[A-Za-z]{1,3}\$?\d+\b|\d[\d.]*\s*[-+*/^&<>=]|[A-Za-z]\w*\||=))/;

/** True when `raw` looks like a spreadsheet formula (see FORMULA). */
function looksLikeFormula(raw: string): boolean {
  return FORMULA.test(raw);
}

/** Required free text (names, street, city): empty, control characters, damaged encoding, formulas. */
export function textProblem(raw: string): ValueProblem | undefined {
  if (raw === '') return { code: 'FIELD_REQUIRED', message: 'is empty; it is required.' };
  if (looksLikeFormula(raw)) {
    return {
      code: 'FORMULA_TEXT',
      message:
        'is a spreadsheet formula, not a name or address (it starts with = + - or @ followed by formula text). The export copied a formula instead of its value: export the values, or type the text.',
    };
  }

  if (/[\u0000-\u001f\u007f]/.test(raw))
    return { code: 'CONTROL_CHARACTER', message: 'contains a tab or other control character; remove it.' };
  // C1 controls are what windows-1252 letters (€ Š ‘ ’ “ ” …) become when read as latin1.
  if (/[\u0080-\u009f]/.test(raw))
    return {
      code: 'CONTROL_CHARACTER',
      message:
        'contains an invisible control character; if the file is an Excel "ANSI" export, read it with --encoding windows-1252.',
    };
  if (raw.includes('\uFFFD')) {
    return {
      code: 'REPLACEMENT_CHARACTER',
      message:
        'contains "\uFFFD": this text was damaged by a wrong character encoding before it reached this file. Retype it.',
    };
  }
  return undefined;
}

/** Exactly one e-mail address, by zod's check. */
export function emailProblem(raw: string): ValueProblem | undefined {
  if (raw === '') return { code: 'FIELD_REQUIRED', message: 'is empty; it is required.' };
  if (/[,;]/.test(raw)) return { code: 'EMAIL_INVALID', message: 'holds more than one address; give exactly one.' };
  if (!emailSchema.safeParse(raw).success)
    return { code: 'EMAIL_INVALID', message: 'is not a valid e-mail address (like name@example.com).' };
  return undefined;
}

/**
 * An ISO 639-1 language code, lower case. `NL` is accepted as `nl` (the caller notes it);
 * `nl-NL` gets a hint to give just the language.
 */
export function languageCode(raw: string): { value: string } | { problem: ValueProblem } {
  if (raw === '') return { problem: { code: 'FIELD_REQUIRED', message: 'is empty; it is required.' } };
  if (isLanguageCode(raw)) return { value: raw };
  const recased = raw.toLowerCase();
  if (isLanguageCode(recased)) return { value: recased };
  const base = recased.split(/[-_]/)[0] ?? '';
  const hint = base !== recased && isLanguageCode(base) ? ` Use just the language: '${base}'.` : '';
  return {
    problem: {
      code: 'LANGUAGE_CODE_INVALID',
      message: `is not an ISO 639-1 two-letter language code such as nl, fr, de or en.${hint}`,
    },
  };
}
