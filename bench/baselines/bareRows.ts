/**
 * The bare baseline's reading: csv-parse streaming the file, then the product's own row check
 * (`validateRow`: the zod e-mail schema, the ISO code lists, libphonenumber) on every row, in a
 * plain loop. No grouping by orderRef, no spill files, no order keys, no rejects file: what is
 * left of `validate` when everything but parsing and checking is taken away.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { validateRow, type CheckedRow, type RowText } from '../../src/ingest/validateRow.js';
import type { NormalizedRow } from '../../src/ingest/orderFields.js';

export interface BareRow {
  checked: CheckedRow;
  cells: string[];
}

/** Yields every data row of a CSV whose header names the order fields, checked. */
export async function* bareRows(file: string): AsyncGenerator<BareRow> {
  const parser = createReadStream(file).pipe(parse({ bom: true, relax_column_count: true }));
  let header: string[] | undefined;
  let line = 1;
  for await (const record of parser as AsyncIterable<string[]>) {
    if (header === undefined) {
      header = record;
      continue;
    }
    line++;
    const text: RowText = {};
    header.forEach((name, i) => ((text as Record<string, string | undefined>)[name] = record[i]));
    yield { checked: validateRow(line, text), cells: record };
  }
}

/** The order body a bare script posts for one checked row (one product line), built by hand. */
export function barePayload(v: NormalizedRow): {
  businessCustomerId: number;
  recipient: unknown;
  products: { productId: number; quantity: number }[];
} {
  return {
    businessCustomerId: v.businessCustomerId,
    recipient: {
      address: {
        firstName: v.firstName,
        lastName: v.lastName,
        street: v.street,
        streetNumber: v.streetNumber,
        postalCode: v.postalCode,
        city: v.city,
        countryCode: v.countryCode,
      },
      languageCode: v.languageCode,
      email: v.email,
      telephoneNumber: v.telephoneNumber,
    },
    products: [{ productId: v.productId, quantity: v.quantity }],
  };
}
