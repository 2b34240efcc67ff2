import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { validateFile } from '../../src/ingest/validateFile.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { errorList, readAll, rejected, tempDir, valid } from './ingestHelpers.js';
import { JAN_FLAT, janRecipient } from '../helpers/fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const apiOrder = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  orderRef: 'J-1',
  businessCustomerId: 1001,
  recipient: janRecipient(),
  products: [
    { productId: 5001, quantity: 1 },
    { productId: 5002, quantity: 2 },
  ],
  ...over,
});

const flat = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  orderRef: 'F-1',
  businessCustomerId: '1001',
  ...JAN_FLAT,
  productId: 5001,
  quantity: 1,
  ...over,
});

describe('JSON input', () => {
  it('reads orders in the API shape, several product lines each', async () => {
    const file = await tmp.file(
      'orders.json',
      JSON.stringify(
        [apiOrder(), apiOrder({ orderRef: 'J-2', products: [{ productId: 5003, quantity: 1 }] })],
        null,
        2,
      ),
    );
    const orders = valid(await readAll(file));
    expect(orders.map((o) => [o.key, o.lines, o.rowLines])).toEqual([
      ['ref.1001.J-1', [2], [2, 2]],
      ['ref.1001.J-2', [30], [30]],
    ]);
    const { orderRef: _ref, ...payload } = apiOrder();
    expect(orders[0]!.payload).toEqual(payload);
    expect(orders[0]!.rows[1]).toMatchObject({
      orderRef: 'J-1',
      businessCustomerId: '1001',
      productId: '5002',
      quantity: '2',
    });
  });

  it('keys an API-shape order without orderRef by its payload', async () => {
    const { orderRef: _ref, ...noRef } = apiOrder();
    const file = await tmp.file('noref.json', JSON.stringify([noRef, noRef]));
    expect(valid(await readAll(file)).map((o) => o.key.replace(/^sha\.[0-9a-f]{32}/, 'sha'))).toEqual([
      'sha.1',
      'sha.2',
    ]);
  });

  it('refuses fields the API shape does not have, and wrong types, listing each', async () => {
    const order = apiOrder({ giftMessage: 'Enjoy!', products: [{ productId: '5001', quantity: true, colour: 'red' }] });
    (order.recipient as Record<string, unknown>).address = {
      ...(order.recipient as { address: object }).address,
      streetNumber: '12a',
      houseNumberAddition: 'a',
    };
    const file = await tmp.file('unknown.json', JSON.stringify([order]));
    expect(errorList(await readAll(file))).toEqual([
      '1:FIELD_TYPE:productId',
      '1:FIELD_TYPE:quantity',
      '1:STREET_NUMBER_ADDITION:streetNumber',
      '1:UNKNOWN_FIELD:giftMessage',
      '1:UNKNOWN_FIELD:products.colour',
      '1:UNKNOWN_FIELD:recipient.address.houseNumberAddition',
    ]);
  });

  it('holds API-shape orders to JSON types: numbers for integers, strings for text', async () => {
    const order = apiOrder({ businessCustomerId: '1001' });
    (order.recipient as { address: Record<string, unknown> }).address.postalCode = 1015;
    const file = await tmp.file('types.json', JSON.stringify([order]));
    expect(errorList(await readAll(file))).toEqual(['1:FIELD_TYPE:businessCustomerId', '1:FIELD_TYPE:postalCode']);
  });

  it('refuses an order without product lines', async () => {
    const file = await tmp.file('empty.json', JSON.stringify([apiOrder({ products: [] })]));
    expect(errorList(await readAll(file))).toEqual(['1:FIELD_REQUIRED:products']);
  });

  it('refuses two complete orders with one orderRef', async () => {
    const file = await tmp.file(
      'dup.json',
      `[\n${JSON.stringify(apiOrder())},\n${JSON.stringify(apiOrder({ products: [{ productId: 5009, quantity: 1 }] }))}\n]`,
    );
    expect(errorList(await readAll(file))).toEqual(['3:DUPLICATE_ORDER_REF:orderRef']);
  });

  it('reports a malformed element or a non-object on its line and reads the rest', async () => {
    const file = await tmp.file('bad.json', `[\n${JSON.stringify(apiOrder())},\n{"orderRef": "x", bad},\n42\n]`);
    const items = await readAll(file);
    expect(valid(items)).toHaveLength(1);
    expect(errorList(items)).toEqual(['3:JSON_SYNTAX:', '4:NOT_AN_ORDER:']);
  });

  it('keeps a broken NDJSON line as written in its rejects row (first column), also when the file spills', async () => {
    const broken = '{"orderRef": "N-2", "businessCustomerId": 1001, "firstName": "Jan" "lastName": "de Vries"}';
    const lines = [
      JSON.stringify(apiOrder({ orderRef: 'N-1' })),
      broken,
      JSON.stringify(apiOrder({ orderRef: 'N-3' })),
    ];
    const file = await tmp.file('broken.ndjson', lines.join('\n') + '\n');
    for (const options of [{}, { spillThresholdBytes: 1, bucketBytes: 64 }]) {
      const { rejectsPath, summary } = await validateFile(file, { ...options, out: `${file}.rejects.csv` }, ORDERS);
      expect(summary.valid).toBe(2);
      const rows: string[][] = parse((await readFile(rejectsPath!, 'utf8')).replace(/^\uFEFF/, ''), {});
      const [header, row, ...more] = rows;
      expect(more).toEqual([]);
      expect(header![0]).toBe('orderRef');
      expect(row![0]).toBe(broken); // what was written, not an empty row
      expect(row!.slice(-3, -1)).toEqual(['2', 'JSON_SYNTAX']);
      expect(row!.at(-1)).toContain('the rejects file keeps it as written, in its first column');
    }
  });

  it('reads flat rows, grouping them by orderRef like CSV rows, with a mapping for keys', async () => {
    const rows = [flat(), flat({ orderRef: 'F-2', productId: 5009 }), flat({ productId: 5002, Opmerking: 'x' })];
    const mapped = rows.map(({ firstName, ...rest }) => ({ ...rest, Voornaam: firstName }));
    const file = await tmp.file('rows.json', JSON.stringify(mapped));
    const items = await readAll(file, { mapping: { Voornaam: 'firstName', Opmerking: '' } });
    expect(
      valid(items).map((o) => [o.orderRef, o.payload.products.length, o.payload.recipient.address.firstName]),
    ).toEqual([
      ['F-1', 2, 'Jan'],
      ['F-2', 1, 'Jan'],
    ]);
  });
});

describe('NDJSON input', () => {
  it('reads one flat row or one order per line, with line numbers', async () => {
    const lines = [
      flat(),
      flat({ orderRef: 'F-2' }),
      '',
      flat({ productId: 5002 }),
      apiOrder({ orderRef: 'J-9' }),
      flat({ orderRef: 'F-3', email: 'nope' }),
    ];
    const file = await tmp.file(
      'rows.ndjson',
      lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\r\n'),
    );
    const items = await readAll(file);
    expect(valid(items).map((o) => [o.orderRef, o.lines])).toEqual([
      ['F-1', [1, 4]],
      ['F-2', [2]],
      ['J-9', [5]],
    ]);
    expect(rejected(items).map((o) => [o.orderRef, o.errors[0]?.line, o.errors[0]?.code])).toEqual([
      ['F-3', 6, 'EMAIL_INVALID'],
    ]);
  });

  it('treats a flat row without orderRef as an order of its own', async () => {
    const { orderRef: _ref, ...row } = flat();
    const file = await tmp.file('plain.ndjson', `${JSON.stringify(row)}\n${JSON.stringify(row)}\n`);
    const keys = valid(await readAll(file)).map((o) => o.key);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
  });
});
