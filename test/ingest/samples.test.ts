import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { describe, expect, it } from 'vitest';
import { samplesDir } from '../../src/paths.js';
import type { IngestOptions } from '../../src/ingest/openOrderSource.js';
import type { IngestItem } from '../../src/ingest/types.js';
import { errorList, readAll, rejected, valid } from './ingestHelpers.js';

const sample = (name: string): string => join(samplesDir, name);
const mapping = JSON.parse(readFileSync(sample('export-dutch-headers.map.json'), 'utf8')) as Record<string, string>;

/** Every sample file with what reading it needs and what it must hold. */
const SAMPLES: Record<string, { options?: IngestOptions; rows: number; valid: number; rejected: number }> = {
  'gift-orders.csv': { rows: 20, valid: 20, rejected: 0 },
  'gift-orders-semicolon.csv': { rows: 8, valid: 8, rejected: 0 },
  'multi-line-orders.csv': { rows: 14, valid: 6, rejected: 0 },
  'gift-orders.json': { rows: 9, valid: 6, rejected: 0 },
  'gift-orders.ndjson': { rows: 6, valid: 5, rejected: 0 },
  'mistakes.csv': { rows: 21, valid: 4, rejected: 15 },
  'export-dutch-headers.csv': { options: { mapping }, rows: 3, valid: 2, rejected: 0 },
  'excel-ansi-windows-1252.csv': { options: { encoding: 'windows-1252' }, rows: 3, valid: 3, rejected: 0 },
};

const read = new Map<string, IngestItem[]>();
async function items(name: string): Promise<IngestItem[]> {
  if (!read.has(name)) read.set(name, await readAll(sample(name), SAMPLES[name]!.options ?? {}));
  return read.get(name)!;
}

describe('samples', () => {
  it('are all listed here', () => {
    // employees*.* are employee files for `accounts import`, covered by test/accounts/accountIngest.test.ts.
    const files = readdirSync(samplesDir).filter(
      (f) =>
        !f.endsWith('.map.json') && !f.includes('.rejects.') && !f.includes('.results.') && !f.startsWith('employees'),
    );
    expect(files.sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  for (const [name, expected] of Object.entries(SAMPLES)) {
    it(`${name}: ${expected.valid} valid and ${expected.rejected} rejected orders from ${expected.rows} rows`, async () => {
      const all = await items(name);
      expect(all.reduce((n, i) => n + i.rows.length, 0)).toBe(expected.rows);
      expect(valid(all)).toHaveLength(expected.valid);
      expect(rejected(all)).toHaveLength(expected.rejected);
    });
  }

  it('read the same in memory and through spill files (the compact spill codec loses nothing)', async () => {
    const { tmpdir } = await import('node:os');
    for (const [name, { options }] of Object.entries(SAMPLES)) {
      const spilled = await readAll(sample(name), {
        ...options,
        spillThresholdBytes: 0,
        streamWindowRows: 0,
        bucketBytes: 256,
        tmpDir: tmpdir(),
      });
      const byLine = (list: IngestItem[]): IngestItem[] =>
        [...list].sort((a, b) => (a.lines[0] ?? 0) - (b.lines[0] ?? 0));
      expect(byLine(spilled), name).toEqual(byLine(await items(name)));
    }
  });

  it('use only the simulator catalogue (customers 1001-1010, products 5001-5050) except the two 5999 rows', async () => {
    const unknown: string[] = [];
    for (const name of Object.keys(SAMPLES)) {
      for (const order of valid(await items(name))) {
        expect(order.payload.businessCustomerId).toBeGreaterThanOrEqual(1001);
        expect(order.payload.businessCustomerId).toBeLessThanOrEqual(1010);
        for (const { productId } of order.payload.products)
          if (productId < 5001 || productId > 5050) unknown.push(`${name}:${order.orderRef}:${productId}`);
      }
    }
    expect(unknown).toEqual(['gift-orders.csv:GIFT-2025-0007:5999', 'gift-orders.csv:GIFT-2025-0016:5999']);
  });

  it('have phone numbers valid for the recipient country', async () => {
    for (const name of Object.keys(SAMPLES)) {
      for (const order of valid(await items(name))) {
        const { telephoneNumber, address } = { ...order.payload.recipient, address: order.payload.recipient.address };
        expect(parsePhoneNumberFromString(telephoneNumber)?.country, `${name} ${order.orderRef}`).toBe(
          address.countryCode,
        );
      }
    }
  });

  it('use orderRefs that no other sample file uses (the demo imports them into one ledger)', async () => {
    const owner = new Map<string, string>();
    for (const name of Object.keys(SAMPLES)) {
      for (const item of await items(name)) {
        if (item.key === undefined) continue;
        const other = owner.get(item.key);
        expect(other === undefined || other === name, `${item.key} in ${name} and ${other}`).toBe(true);
        owner.set(item.key, name);
      }
    }
  });

  it('mistakes.csv shows the typical mistakes, each on its line', async () => {
    const all = await items('mistakes.csv');
    expect(errorList(all)).toEqual(
      [
        '3:PHONE_INVALID:telephoneNumber',
        '4:PHONE_NOT_INTERNATIONAL:telephoneNumber',
        '5:EMAIL_INVALID:email',
        '7:FIELD_REQUIRED:streetNumber',
        '7:PHONE_NOT_INTERNATIONAL:telephoneNumber',
        '8:STREET_NUMBER_ADDITION:streetNumber',
        '9:INTEGER_INVALID:quantity',
        '11:INTEGER_INVALID:productId',
        '12:COUNTRY_CODE_INVALID:countryCode',
        '13:RECIPIENT_MISMATCH:lastName',
        '13:RECIPIENT_MISMATCH:email',
        '14:LANGUAGE_CODE_INVALID:languageCode',
        '15:INTEGER_NOT_POSITIVE:quantity',
        '17:FIELD_REQUIRED:businessCustomerId',
        '19:CSV_FIELD_COUNT:',
        '21:EMAIL_INVALID:email',
        '22:COUNTRY_CODE_INVALID:countryCode',
      ].sort(),
    );
    const notes = valid(all).flatMap((o) => o.notes);
    expect(notes).toContain("line 6: countryCode 'nl' -> 'NL'");
    // One product on two lines of MIS-2025-0014 (lines 16 and 18) is sent as one line (issue 23).
    expect(notes).toContainEqual(
      expect.stringMatching(/^line 18: productId PRODUCTS_MERGED: productId 5016 is also on line 16/),
    );
  });
});
