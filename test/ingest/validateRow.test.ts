import { describe, expect, it } from 'vitest';
import { integerProblem, validateRow, type RowText } from '../../src/ingest/validateRow.js';
import { maskValue } from '../../src/ingest/maskValue.js';

const good: RowText = {
  businessCustomerId: '1001',
  firstName: 'Jan',
  lastName: 'de Vries',
  street: 'Keizersgracht',
  streetNumber: '112',
  postalCode: '1015 CX',
  city: 'Amsterdam',
  countryCode: 'NL',
  languageCode: 'nl',
  email: 'jan.devries@example.nl',
  telephoneNumber: '+31612345678',
  productId: '5001',
  quantity: '2',
};

const check = (over: RowText) => validateRow(7, { ...good, ...over });
const codes = (over: RowText) => check(over).errors.map((e) => `${e.column}:${e.code}`);

describe('validateRow', () => {
  it('accepts a valid row and parses its numbers', () => {
    const result = check({});
    expect(result.errors).toEqual([]);
    expect(result.notes).toEqual([]);
    expect(result.value).toMatchObject({
      businessCustomerId: 1001,
      streetNumber: 112,
      productId: 5001,
      quantity: 2,
      countryCode: 'NL',
    });
  });

  it('trims surrounding whitespace, with a note for each value it trimmed', () => {
    const result = check({ firstName: '  Jan ', city: '\tAmsterdam ', productId: ' 5001 ' });
    expect(result.errors).toEqual([]);
    expect(result.notes).toEqual([
      'line 7: firstName TRIMMED: spaces around the value removed',
      'line 7: city TRIMMED: spaces around the value removed',
      'line 7: productId TRIMMED: spaces around the value removed',
    ]);
    expect(result.value).toMatchObject({ firstName: 'Jan', city: 'Amsterdam', productId: 5001 });
  });

  for (const field of ['businessCustomerId', 'productId', 'quantity', 'streetNumber'] as const) {
    it(`parses ${field} strictly`, () => {
      for (const bad of [
        '',
        '1e3',
        '0x1A',
        '12a',
        '1.5',
        '-3',
        '0',
        '000',
        '+5',
        '1 000',
        '2.0',
        'twelve',
        '9007199254740993',
      ]) {
        const result = check({ [field]: bad });
        expect(result.value, `${field}=${bad}`).toBeUndefined();
        expect(
          result.errors.map((e) => e.column),
          `${field}=${bad}`,
        ).toEqual([field]);
      }
    });
  }

  it('explains scientific notation, fractions, signs and hex in words a person can act on', () => {
    expect(integerProblem('1e3')?.message).toContain('scientific notation');
    expect(integerProblem('1.5')?.message).toContain('not a whole number');
    expect(integerProblem('-3')).toMatchObject({ code: 'INTEGER_NOT_POSITIVE' });
    expect(integerProblem('0')).toMatchObject({ code: 'INTEGER_NOT_POSITIVE' });
    expect(integerProblem('0x1A')?.message).toContain('hexadecimal');
    expect(integerProblem('9007199254740993')).toMatchObject({ code: 'INTEGER_TOO_LARGE' });
    expect(integerProblem('9007199254740991')).toBeUndefined();
  });

  it('explains that the API takes an integer street number for house-number additions', () => {
    for (const bad of ['12a', '12 A', '12-2', '12/3', '12 bis']) {
      const [error] = check({ streetNumber: bad }).errors;
      expect(error?.code, bad).toBe('STREET_NUMBER_ADDITION');
      expect(error?.message).toContain('the API takes the street number as an integer');
    }
  });

  it('reports every problem of a row, each with line, column and masked value', () => {
    const result = check({
      email: 'jan@',
      telephoneNumber: '0612345678',
      quantity: '1.5',
      countryCode: 'XX',
      streetNumber: '',
    });
    expect(result.errors.map((e) => `${e.line}:${e.column}:${e.code}`)).toEqual([
      '7:streetNumber:FIELD_REQUIRED',
      '7:countryCode:COUNTRY_CODE_INVALID',
      '7:email:EMAIL_INVALID',
      '7:telephoneNumber:PHONE_NOT_INTERNATIONAL',
      '7:quantity:INTEGER_INVALID',
    ]);
    const phone = result.errors.find((e) => e.column === 'telephoneNumber')!;
    expect(phone.value).toBe('0*******78');
    expect(phone.message).not.toContain('0612345678');
    expect(phone.message).not.toContain('+31'); // no example: the row's country is unknown
    expect(check({ telephoneNumber: '0612345678' }).errors[0]?.message).toContain('For NL: +31');
    expect(check({ telephoneNumber: '0470123456', countryCode: 'BE' }).errors[0]?.message).toContain('For BE: +32');
  });

  it('normalises phone numbers to E.164 and says so', () => {
    const result = check({ telephoneNumber: '+31 6 1234 5678' });
    expect(result.value?.telephoneNumber).toBe('+31612345678');
    expect(result.notes).toEqual(['line 7: telephoneNumber written as E.164 (spaces and punctuation removed)']);
    expect(check({ telephoneNumber: '+32 (0)470 12 34 56' }).value?.telephoneNumber).toBe('+32470123456');
  });

  it('accepts leading zeros in an integer field, with a note (00079 is 79, not an addition)', () => {
    const result = check({ streetNumber: '00079', productId: '05001' });
    expect(result.errors).toEqual([]);
    expect(result.value).toMatchObject({ streetNumber: 79, productId: 5001 });
    expect(result.notes).toEqual([
      "line 7: streetNumber LEADING_ZEROS: '00079' read as 79",
      "line 7: productId LEADING_ZEROS: '05001' read as 5001",
    ]);
    expect(check({ businessCustomerId: '001001' }).identity.businessCustomerId).toBe('1001'); // groups with "1001"
  });

  it('accepts possible but unknown phone numbers with a PHONE_UNVERIFIED note; --strict-phone refuses them', () => {
    for (const number of ['+972501234511', '+447700900016', '+31 6 9876 5432']) {
      const result = check({ telephoneNumber: number });
      expect(result.errors, number).toEqual([]);
      expect(
        result.notes.some((n) => n.startsWith('line 7: telephoneNumber PHONE_UNVERIFIED:')),
        number,
      ).toBe(true);
      expect(
        validateRow(7, { ...good, telephoneNumber: number }, { strictPhone: true }).errors.map((e) => e.code),
        number,
      ).toEqual(['PHONE_UNVERIFIED']);
    }
    expect(validateRow(7, good, { strictPhone: true }).errors).toEqual([]); // valid numbers pass either way
  });

  it('refuses phones that cannot be numbers of their country', () => {
    expect(codes({ telephoneNumber: '+316123' })).toEqual(['telephoneNumber:PHONE_INVALID']); // too short
    expect(codes({ telephoneNumber: '+3161234567890123' })).toEqual(['telephoneNumber:PHONE_INVALID']); // too long
    expect(codes({ telephoneNumber: '+1415555267' })).toEqual(['telephoneNumber:PHONE_INVALID']); // too short for +1
    expect(codes({ telephoneNumber: '+31 6 CALL ME' })).toEqual(['telephoneNumber:PHONE_INVALID']);
    expect(codes({ telephoneNumber: '0031612345678' })).toEqual(['telephoneNumber:PHONE_NOT_INTERNATIONAL']);
    expect(codes({ telephoneNumber: '06-12345678' })).toEqual(['telephoneNumber:PHONE_NOT_INTERNATIONAL']);
    expect(codes({ telephoneNumber: '' })).toEqual(['telephoneNumber:FIELD_REQUIRED']);
    expect(codes({ telephoneNumber: '+49 151 23456789' })).toEqual([]);
  });

  it('checks e-mail addresses with zod', () => {
    for (const bad of [
      'jan',
      'jan@example',
      'jan@@example.nl',
      'jan de vries@example.nl',
      'a@example.nl; b@example.nl',
    ]) {
      expect(codes({ email: bad }), bad).toEqual(['email:EMAIL_INVALID']);
    }
    expect(codes({ email: 'Jan.de-Vries+gift@sub.example.co.uk' })).toEqual([]);
  });

  it('fixes the case of country and language codes, with a note; refuses unknown codes', () => {
    const result = check({ countryCode: 'nl', languageCode: 'NL' });
    expect(result.value).toMatchObject({ countryCode: 'NL', languageCode: 'nl' });
    expect(result.notes).toEqual(["line 7: countryCode 'nl' -> 'NL'", "line 7: languageCode 'NL' -> 'nl'"]);
    expect(codes({ countryCode: 'Nederland' })).toEqual(['countryCode:COUNTRY_CODE_INVALID']);
    expect(check({ countryCode: 'UK' }).errors[0]?.message).toContain('GB');
    expect(check({ countryCode: 'NLD' }).errors[0]?.message).toContain('two-letter');
    expect(codes({ countryCode: 'XK' })).toEqual(['countryCode:COUNTRY_CODE_INVALID']);
    expect(check({ languageCode: 'nl-BE' }).errors[0]?.message).toContain("'nl'");
    expect(codes({ languageCode: 'xx' })).toEqual(['languageCode:LANGUAGE_CODE_INVALID']);
  });

  it('joins line breaks inside a text with ", " and notes it; other control characters are refused', () => {
    const result = check({ street: 'Rue de la Paix\nBâtiment B', city: 'Paris,\r\n\r\n 2e ' });
    expect(result.errors).toEqual([]);
    expect(result.value).toMatchObject({ street: 'Rue de la Paix, Bâtiment B', city: 'Paris, 2e' });
    expect(result.notes).toContain('line 7: street LINE_BREAKS_JOINED: line breaks inside the text joined with ", "');
    expect(codes({ street: 'Keizers\tgracht' })).toEqual(['street:CONTROL_CHARACTER']);
    expect(codes({ orderRef: 'R\n1' })).toEqual(['orderRef:CONTROL_CHARACTER']);
  });

  it('refuses formula text in names and addresses with a clear reason, but not names that merely start with - or @', () => {
    for (const formula of [
      '=HYPERLINK("http://x.example","click")',
      '=1+1',
      '+SUM(A1:A3)',
      '-2+3',
      '@SUM(1,2)',
      '+A1',
      "+cmd|' /C calc'!A0",
      '\'=HYPERLINK("x")',
    ]) {
      const [error] = check({ firstName: formula }).errors;
      expect(error?.code, formula).toBe('FORMULA_TEXT');
      expect(error?.message).toContain('spreadsheet formula');
    }
    expect(codes({ street: '=IMPORTXML("x")' })).toEqual(['street:FORMULA_TEXT']);
    for (const name of ['-', '@home', 'Jean-Luc', '+']) expect(codes({ lastName: name }), name).toEqual([]);
  });

  it('requires text fields and refuses control characters and damaged text', () => {
    expect(codes({ firstName: ' ' })).toEqual(['firstName:FIELD_REQUIRED']);
    expect(codes({ street: 'Keizers\u0007gracht' })).toEqual(['street:CONTROL_CHARACTER']);
    expect(codes({ lastName: 'M\u0081ller' })).toEqual(['lastName:CONTROL_CHARACTER']);
    expect(codes({ city: 'K\uFFFDln' })).toEqual(['city:REPLACEMENT_CHARACTER']);
  });

  it('removes the apostrophe the rejects file puts before formula-like cells, with a note', () => {
    const result = check({ telephoneNumber: "'+31612345678" });
    expect(result.value?.telephoneNumber).toBe('+31612345678');
    expect(result.notes[0]).toContain('apostrophe');
    expect(codes({ quantity: "'-3" })).toEqual(['quantity:INTEGER_NOT_POSITIVE']);
  });

  it('treats orderRef as optional, but empty is an error when the column exists', () => {
    expect(check({}).identity).toEqual({ businessCustomerId: '1001' });
    expect(check({ orderRef: ' R-1 ' }).value?.orderRef).toBe('R-1');
    expect(codes({ orderRef: '' })).toEqual(['orderRef:ORDER_REF_MISSING']);
  });
});

describe('maskValue', () => {
  it('masks personal data and leaves the rest', () => {
    expect(maskValue('email', 'jan.devries@example.com')).toBe('j***@e***.com');
    expect(maskValue('telephoneNumber', '+31612345678')).toBe('+31*******78');
    expect(maskValue('firstName', 'Jan')).toBe('J***');
    expect(maskValue('lastName', 'Øster')).toBe('Ø***');
    expect(maskValue('street', 'Keizersgracht')).toBe('K***');
    expect(maskValue('postalCode', '1015 CX')).toBe('10***');
    expect(maskValue('email', 'no-at-sign')).toBe('n***');
    expect(maskValue('quantity', '1.5')).toBe('1.5');
    expect(maskValue('city', 'x'.repeat(100))).toHaveLength(40);
  });
});
