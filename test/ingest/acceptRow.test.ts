import { describe, expect, it } from 'vitest';
import { acceptRow } from '../../src/ingest/acceptRow.js';
import { ORDER_FIELD_TABLE, type FieldRule } from '../../src/ingest/orderFields.js';
import { validateRow, type RowText } from '../../src/ingest/validateRow.js';

/**
 * Property-style: rows generated over ORDER_FIELD_TABLE, each field drawn from its rule's pool of
 * clean values (that the accept path must take) and of values validateRow refuses, or accepts only
 * with a note. Wherever acceptRow says yes, validateRow must say the same thing: no error, no note,
 * the same value, recipient and identity.
 */

/** Values validateRow accepts as written, with no note: the accept path must take rows made of these. */
const CLEAN: Record<FieldRule, readonly string[]> = {
  reference: ['A-1', 'ORD 2026/17', 'BENCH-1-000001', "'t Hart-3", '+plus', 'x'],
  integer: ['1', '7', '1001', '999999999999999', '42'],
  houseNumber: ['1', '12', '112', '9000'],
  text: ['Jan', 'de Vries', "'t Hart", 'Mönckebergstraße', 'Zoë', '1015 CX', 'São Paulo', 'a@b', 'Rue 5 = 6', '東京'],
  country: ['NL', 'BE', 'DE', 'FR'],
  language: ['nl', 'fr', 'de', 'en'],
  email: ['jan.devries@example.nl', 'a+b@mail.example.com', "o'brien@x.ie", 'x_y-z@sub.domain.de'],
  phone: ['+31612345678', '+32470123456', '+4915112345678', '+31201234567'],
};

/** Values validateRow refuses, or accepts with a note (trimmed, recased, unwrapped, ...). */
const TRICKY: Record<FieldRule, readonly string[]> = {
  reference: ['', ' A-1', 'A-1 ', 'a\tb', 'a\u0000b', "'=A1", '="A-1"', '=A1', 'A\u0085', 'a\nb', '\u00a0A'],
  integer: [
    '',
    '0',
    '007',
    '-3',
    '+5',
    '1.5',
    '1e3',
    '0x1f',
    '1,000',
    '9007199254740993',
    '1234567890123456',
    ' 12',
    '١٢',
    "'-1",
    '="12"',
  ],
  houseNumber: ['12a', '12-2', '12 bis', '0', '007', '', ' 1'],
  text: [
    '',
    ' Jan',
    'Jan ',
    '=SUM(A1)',
    '+A1',
    '-2+3',
    '@SUM(1)',
    '-',
    '@home',
    'Rue\nBâtiment B',
    'a\tb',
    'Ã©\u0089',
    'bad \uFFFD',
    "'=cmd",
    '="Jan"',
    '\u2003Jan',
    'Jan\u00a0',
  ],
  country: ['', 'nl', 'Nl', 'NLD', 'UK', 'XX', ' NL', 'AQ'],
  language: ['', 'NL', 'Nl', 'nl-NL', 'xx', ' nl'],
  email: ['', 'a@b', 'a,b@c.nl', 'a@b.nl;c@d.nl', 'no at', 'a@b..nl', ' jan@example.nl', 'JAN@EXAMPLE.NL', 'a@b.c'],
  phone: [
    '',
    '0612345678',
    '0031612345678',
    '+31 6 12345678',
    '+31-6-1234-5678',
    '+316123',
    '+3161234567890',
    '+31abc',
    '+999123456789',
    '+31(0)612345678',
    ' +31612345678',
    '="+31612345678"',
    "'+31612345678",
    '+1',
    '+',
    '+12015550123',
    '+31612345678 ',
    '+3197012345678',
  ],
};

/** Seeded, so a failure names a row that can be generated again. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: () => number, from: readonly T[]): T => from[Math.floor(random() * from.length)]!;

function row(random: () => number, trickyShare: number, withOrderRef: boolean): RowText {
  const text: Record<string, string> = {};
  for (const spec of ORDER_FIELD_TABLE) {
    if ('optional' in spec && !withOrderRef) continue;
    text[spec.name] = pick(random, random() < trickyShare ? TRICKY[spec.rule] : CLEAN[spec.rule]);
  }
  return text;
}

describe('acceptRow (the accept path) against validateRow (the description)', () => {
  it('accepts every row made of clean values, with exactly validateRow result', () => {
    const random = prng(1);
    for (let i = 0; i < 3000; i++) {
      const text = row(random, 0, i % 3 !== 0);
      const fast = acceptRow(i + 2, text);
      expect(fast, JSON.stringify(text)).toBeDefined();
      expect(fast).toEqual(validateRow(i + 2, text));
    }
  });

  it('never accepts what validateRow refuses or notes, and equals it wherever it accepts', () => {
    const random = prng(25);
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 8000; i++) {
      const text = row(random, i % 2 === 0 ? 0.05 : 0.3, i % 4 !== 0);
      const slow = validateRow(i + 2, text);
      const fast = acceptRow(i + 2, text);
      if (fast === undefined) {
        refused++;
        continue;
      }
      accepted++;
      expect(slow.errors, JSON.stringify(text)).toEqual([]);
      expect(slow.notes, JSON.stringify(text)).toEqual([]);
      expect(fast).toEqual(slow);
    }
    // Both kinds of row were met, so the loop above tested something on each side.
    expect(accepted).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(500);
  });

  it('passes each tricky value, alone in a clean row, to validateRow', () => {
    const random = prng(7);
    for (const spec of ORDER_FIELD_TABLE) {
      for (const value of TRICKY[spec.rule]) {
        const text = { ...row(random, 0, true), [spec.name]: value } as RowText;
        const slow = validateRow(3, text);
        const fast = acceptRow(3, text);
        if (slow.errors.length > 0 || slow.notes.length > 0)
          expect(fast, `${spec.name} ${JSON.stringify(value)}`).toBe(undefined);
        else if (fast !== undefined) expect(fast).toEqual(slow);
      }
    }
  });

  it('gives the same verdict on a phone number from its cache as from the parse', () => {
    const text = row(prng(3), 0, true);
    for (const telephoneNumber of ['+31612345678', '+3161234', '+31612345678', '+3161234']) {
      const fast = acceptRow(2, { ...text, telephoneNumber });
      const slow = validateRow(2, { ...text, telephoneNumber });
      if (fast !== undefined) expect(fast).toEqual(slow);
      else expect(slow.errors.length + slow.notes.length).toBeGreaterThan(0);
    }
    // Past the cache's two generations (4,096 numbers) a number is parsed again, to the same verdict.
    for (let i = 0; i < 5000; i++) acceptRow(2, { ...text, telephoneNumber: `+3161${String(i).padStart(7, '0')}` });
    expect(acceptRow(2, { ...text, telephoneNumber: '+31612345678' })).toEqual(validateRow(2, { ...text }));
  });

  it('leaves a row without a required column to validateRow', () => {
    const text = row(prng(4), 0, true);
    delete text.email;
    expect(acceptRow(2, text)).toBe(undefined);
    expect(validateRow(2, text).errors.map((e) => e.code)).toEqual(['FIELD_REQUIRED']);
  });
});
