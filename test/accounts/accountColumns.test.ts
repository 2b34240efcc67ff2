import { describe, expect, it } from 'vitest';
import { ACCOUNT_COLUMNS, ACCOUNT_FIELD_TABLE, ACCOUNT_FIELDS } from '../../src/ingest/accountColumns.js';
import { validateAccountRow } from '../../src/ingest/validateAccountRow.js';
import { fieldForName, normalizeHeader } from '../../src/ingest/resolveColumns.js';

/** Walks ACCOUNT_FIELD_TABLE: every field matches its name and aliases, has synonyms, and is required. */
describe('the account field table', () => {
  it('gives every field synonyms and matches its name and aliases', () => {
    for (const spec of ACCOUNT_FIELD_TABLE) {
      expect(spec.synonyms.length, spec.name).toBeGreaterThan(0);
      for (const synonym of spec.synonyms) expect(synonym).toBe(normalizeHeader(synonym));
      expect(fieldForName(spec.name, ACCOUNT_COLUMNS)).toBe(spec.name);
      for (const alias of 'aliases' in spec ? spec.aliases : [])
        expect(fieldForName(alias, ACCOUNT_COLUMNS)).toBe(spec.name);
    }
    expect(ACCOUNT_COLUMNS.required).toEqual(ACCOUNT_FIELDS);
  });

  it('requires every field by name', () => {
    const good = {
      email: 'anna@example.nl',
      firstName: 'Anna',
      lastName: 'Jansen',
      isoLanguageCode: 'nl',
      companyId: '3f2b8c1e-7d4a-4b6e-9c2d-1a5e8f0b7c3d',
    };
    expect(validateAccountRow(2, good)).toMatchObject({ errors: [], value: good });
    for (const field of ACCOUNT_FIELDS) {
      expect(
        validateAccountRow(2, { ...good, [field]: '' }).errors.map((e) => e.column),
        field,
      ).toContain(field);
    }
  });
});
