import { describe, expect, it } from 'vitest';
import { normalizeHeader, resolveColumns, resolveMapping } from '../../src/ingest/resolveColumns.js';
import { FileRefusedError, UsageError } from '../../src/errors.js';
import { HEADER } from './ingestHelpers.js';

const defaults = HEADER.split(',');

function refusal(fn: () => unknown): FileRefusedError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FileRefusedError);
    return error as FileRefusedError;
  }
  throw new Error('not refused');
}

describe('resolveColumns', () => {
  it('matches headers ignoring case, spaces, _ and -', () => {
    const headers = [
      'Order Ref',
      'business_customer_id',
      'FIRST-NAME',
      'last name',
      'Street',
      'street number',
      'postal_code',
      'CITY',
      'Country Code',
      'language-code',
      'E-mail',
      'telephone number',
      'Product ID',
      'QTY?',
    ];
    headers[13] = 'Quantity';
    const plan = resolveColumns('f.csv', headers);
    expect(plan.fieldIndex).toMatchObject({ orderRef: 0, businessCustomerId: 1, email: 10, quantity: 13 });
    expect(plan.columns).toEqual(headers);
    expect(plan.warnings).toEqual([]);
  });

  it("accepts the API's dotted paths", () => {
    const headers = [
      'businessCustomerId',
      'recipient.address.firstName',
      'recipient.address.lastName',
      'recipient.address.street',
      'recipient.address.streetNumber',
      'recipient.address.postalCode',
      'recipient.address.city',
      'recipient.address.countryCode',
      'recipient.languageCode',
      'recipient.email',
      'recipient.telephoneNumber',
      'products[].productId',
      'products.quantity',
    ];
    const plan = resolveColumns('f.csv', headers);
    expect(plan.fieldIndex.telephoneNumber).toBe(10);
    expect(plan.fieldIndex.productId).toBe(11);
    expect(plan.warnings[0]).toContain('no orderRef column');
  });

  it('keeps extra columns out of the order and lists them; reject_* columns are silently ignored', () => {
    const plan = resolveColumns('f.csv', [...defaults, 'note', 'reject_line', 'reject_codes', 'reject_reasons']);
    expect(plan.ignored).toEqual(['note']);
  });

  it('refuses a file without a required column, naming it and the closest header', () => {
    const headers = defaults.map((h) => (h === 'streetNumber' ? 'Huisnummer' : h === 'telephoneNumber' ? 'phone' : h));
    const error = refusal(() => resolveColumns('f.csv', headers));
    expect(error.code).toBe('COLUMNS_MISSING');
    expect(error.message).toContain('streetNumber (closest header: "Huisnummer")');
    expect(error.message).toContain('telephoneNumber (closest header: "phone")');
    expect(error.message).toContain('--map');
    expect(error.details).toMatchObject({ missing: ['streetNumber', 'telephoneNumber'] });
  });

  it('refuses two columns that mean the same field', () => {
    const error = refusal(() => resolveColumns('f.csv', [...defaults, 'E-Mail']));
    expect(error.code).toBe('COLUMN_DUPLICATE');
    expect(error.message).toContain('"email" and "E-Mail"');
  });

  it('applies a mapping (header -> field, or "" to ignore) before the default names', () => {
    const headers = defaults.map((h) => (h === 'streetNumber' ? 'Huisnummer' : h));
    const mapping = resolveMapping({ huisnummer: 'streetNumber', email: '', 'E-mail adres': 'recipient.email' });
    const plan = resolveColumns('f.csv', [...headers, 'E-mail adres'], mapping);
    expect(plan.fieldIndex.streetNumber).toBe(5);
    expect(plan.fieldIndex.email).toBe(14);
    expect(plan.ignored).toEqual(['email']);
  });

  it('refuses a mapping to an unknown field as a usage error', () => {
    expect(() => resolveMapping({ Voornaam: 'firstname ' })).not.toThrow();
    expect(() => resolveMapping({ Voornaam: 'givenName' })).toThrow(UsageError);
  });

  it('warns when a column looks like an order reference but is not one', () => {
    const headers = defaults.map((h) => (h === 'orderRef' ? 'Bestelnummer' : h));
    const plan = resolveColumns('f.csv', headers);
    expect(plan.warnings[0]).toContain('"Bestelnummer" looks like an order reference');
  });

  it('normalises header names', () => {
    expect(normalizeHeader(' Street_Number ')).toBe('streetnumber');
    expect(normalizeHeader('products[0].productId')).toBe('products.productid');
  });
});
