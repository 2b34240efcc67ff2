/**
 * Baseline of issue 35's validate goal: the loop a person writes for a file whose orders' lines are
 * next to each other. csv-parse with `columns: true` (an object per row), one zod schema per row,
 * consecutive rows of one orderRef merged into one order. It checks less than bulkorder (no phone
 * metadata, no ISO code lists, no notes, no line numbers) and relies on the file being grouped: a
 * shuffled file gives it wrong orders without a word.
 *
 *   node dist/bench/baselines/bareGrouped.js <file.csv>      prints {"rows":..,"orders":..,"valid":..,"rejected":..}
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { z } from 'zod';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: bareGrouped <file.csv>');

const positive = z.coerce.number().int().positive();
const text = z.string().trim().min(1);
const row = z.object({
  orderRef: text,
  businessCustomerId: positive,
  firstName: text,
  lastName: text,
  street: text,
  streetNumber: positive,
  postalCode: text,
  city: text,
  countryCode: z.string().regex(/^[A-Z]{2}$/),
  languageCode: z.string().regex(/^[a-z]{2}$/),
  email: z.email(),
  telephoneNumber: z.string().regex(/^\+[1-9]\d{6,14}$/),
  productId: positive,
  quantity: positive,
});
type Row = z.infer<typeof row>;

let rows = 0;
let orders = 0;
let valid = 0;
let rejected = 0;
let current: { ref: string; ok: boolean; products: { productId: number; quantity: number }[]; first: Row } | undefined;
const close = (): void => {
  if (current === undefined) return;
  orders++;
  if (current.ok) valid++;
  else rejected++;
};
const parser = createReadStream(file).pipe(parse({ bom: true, columns: true, relax_column_count: true }));
for await (const record of parser as AsyncIterable<Record<string, string>>) {
  rows++;
  const checked = row.safeParse(record);
  const ref = `${record.businessCustomerId ?? ''}|${record.orderRef ?? ''}`;
  if (current === undefined || current.ref !== ref) {
    close();
    current = checked.success
      ? { ref, ok: true, products: [], first: checked.data }
      : { ref, ok: false, products: [], first: {} as Row };
  } else if (!checked.success) current.ok = false;
  if (checked.success) current.products.push({ productId: checked.data.productId, quantity: checked.data.quantity });
}
close();
process.stdout.write(JSON.stringify({ rows, orders, valid, rejected }) + '\n');
