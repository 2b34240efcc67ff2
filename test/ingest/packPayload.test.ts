import { describe, expect, it } from 'vitest';
import { ORDERS } from '../../src/kinds/orders.js';
import { JobDataError } from '../../src/errors.js';
import {
  PACKED_LAYOUT,
  PACKED_LAYOUT_VERSION,
  packPayload,
  packPayloadExactly,
  payloadCells,
  payloadLines,
  unpackPayload,
} from '../../src/ingest/orderShape.js';
import { ORDER_FIELDS } from '../../src/ingest/orderFields.js';
import { NEWEST_PACKED_LAYOUT, PACKED_LAYOUTS } from '../../src/ingest/packedLayouts.js';
import { JOB_DATA_VERSION, type ChunkJobData } from '../../src/deliveryJob.js';
import { chunkJob, readJob, sameJson, toChunkRecord } from '../../src/ledger/jobData.js';
import type { OrderPayload, ValidRecord } from '../../src/ingest/types.js';

/** Every valid order of a sample file, as an import reads it. */
async function samples(file: string): Promise<ValidRecord<OrderPayload>[]> {
  const source = await ORDERS.openSource(file, {});
  const valid: ValidRecord<OrderPayload>[] = [];
  for await (const item of source.items()) if (item.kind === 'valid') valid.push(item);
  return valid;
}

describe('a payload packed for a chunk job', () => {
  it.each(['samples/gift-orders.csv', 'samples/multi-line-orders.csv', 'samples/gift-orders.json'])(
    'gives back exactly the payload of every order of %s, in fewer bytes',
    async (file) => {
      const orders = await samples(file);
      expect(orders.length).toBeGreaterThan(0);
      for (const order of orders) {
        const packed = packPayload(order.payload);
        expect(
          JSON.stringify(unpackPayload(JSON.parse(JSON.stringify(packed)) as unknown, PACKED_LAYOUT_VERSION)),
        ).toBe(JSON.stringify(order.payload));
        expect(JSON.stringify(packed).length).toBeLessThan(JSON.stringify(order.payload).length * 0.75);
      }
    },
  );

  it('is used by an import only where it gives the payload back: a payload with a key the table does not know stays whole', async () => {
    const [order] = await samples('samples/gift-orders.csv');
    const packed = toChunkRecord(order!, [], ORDERS);
    expect(packed.packed).toBeDefined();
    expect(packed.payload).toBeUndefined();
    const odd = { ...order!, payload: { ...order!.payload, giftMessage: 'Happy holidays' } as OrderPayload };
    const whole = toChunkRecord(odd, [], ORDERS);
    expect(whole.packed).toBeUndefined();
    expect(whole.payload).toEqual(odd.payload);
  });

  it('is in a layout with a version: a row added to ORDER_FIELD_TABLE needs its layout appended to PACKED_LAYOUTS (src/ingest/packedLayouts.ts)', () => {
    // Fails when the field table changed and PACKED_LAYOUTS did not: add { head, line } as the next version.
    expect(
      PACKED_LAYOUT_VERSION,
      `add ${JSON.stringify(PACKED_LAYOUT)} to PACKED_LAYOUTS as version ${NEWEST_PACKED_LAYOUT + 1}`,
    ).toBe(NEWEST_PACKED_LAYOUT);
    expect(PACKED_LAYOUTS[1]!.head).toHaveLength(11);
  });

  it('is refused, never guessed at, in a layout this code does not know or with values that do not fit its layout', async () => {
    const [order] = await samples('samples/multi-line-orders.csv');
    const [head, lines] = packPayload(order!.payload);
    const refusal = (packed: unknown, version: number): string => {
      try {
        unpackPayload(packed, version);
        return 'read';
      } catch (error) {
        return error instanceof JobDataError ? error.code : String(error);
      }
    };
    expect(refusal([head, lines], 1)).toBe('read');
    expect(refusal([head, lines], NEWEST_PACKED_LAYOUT + 1)).toBe('JOB_DATA_NEWER');
    expect(refusal([[...head, 'one value too many'], lines], 1)).toBe('JOB_DATA_MALFORMED');
    expect(refusal([head.slice(1), lines], 1)).toBe('JOB_DATA_MALFORMED');
    expect(refusal([head, [[5001]]], 1)).toBe('JOB_DATA_MALFORMED');
    expect(refusal([head, [[5001, { quantity: 1 }]]], 1)).toBe('JOB_DATA_MALFORMED');
    expect(refusal({ head, lines }, 1)).toBe('JOB_DATA_MALFORMED');
  });
});

describe('packPayloadExactly, the pack check without unpacking', () => {
  it('packs exactly the payloads the round trip (unpack, then sameJson) gives back, and no other', async () => {
    const orders = [
      ...(await samples('samples/gift-orders.csv')),
      ...(await samples('samples/multi-line-orders.csv')),
      ...(await samples('samples/gift-orders.json')),
    ];
    const [one] = orders as [ValidRecord<OrderPayload>];
    const p = one.payload as unknown as Record<string, unknown> & {
      recipient: Record<string, unknown> & { address: Record<string, unknown> };
      products: Record<string, unknown>[];
    };
    const { businessCustomerId, recipient, products } = p;
    const { address, ...contact } = recipient;
    const { firstName, ...restOfAddress } = address;
    const variants: unknown[] = [
      ...orders.map((order) => order.payload),
      { ...p, giftMessage: 'x' }, // a key the layout does not know
      { products, recipient, businessCustomerId }, // the same members in another order
      { recipient, businessCustomerId, products },
      { businessCustomerId, recipient, products, extra: undefined }, // undefined members are left out
      { businessCustomerId, recipient: { ...contact, address }, products }, // address after the contact fields
      { businessCustomerId, recipient: { address: restOfAddress, ...contact }, products }, // firstName absent
      { businessCustomerId, recipient: { address: { ...restOfAddress, firstName }, ...contact }, products },
      { businessCustomerId, recipient: { address: {}, ...contact }, products }, // an empty object
      { businessCustomerId, recipient: { ...recipient, email: true }, products }, // not a string or number
      { businessCustomerId, recipient: { ...recipient, email: null }, products },
      { businessCustomerId, recipient: { ...recipient, email: ['a'] }, products },
      { businessCustomerId, recipient: 'someone', products },
      { businessCustomerId, recipient: [recipient], products },
      { businessCustomerId: Number.NaN, recipient, products },
      { businessCustomerId: -0, recipient, products },
      { businessCustomerId: String(businessCustomerId), recipient, products },
      { recipient, products }, // businessCustomerId absent
      { businessCustomerId, products }, // recipient absent
      { businessCustomerId, recipient, products: [] },
      { businessCustomerId, recipient, products: [{}] },
      { businessCustomerId, recipient, products: [{ ...products[0], note: 'x' }] },
      {
        businessCustomerId,
        recipient,
        products: [{ quantity: products[0]!.quantity, productId: products[0]!.productId }],
      },
      { businessCustomerId, recipient, products: [{ ...products[0], quantity: '2' }] },
      { businessCustomerId, recipient, products: [{ ...products[0], quantity: undefined }] },
      { businessCustomerId, recipient, products: [products[0], null] },
      { businessCustomerId, recipient, products: [products[0], [1, 2]] },
      { businessCustomerId, recipient, products: { 0: products[0], length: 1, map: Array.prototype.map } },
      Object.assign(Object.create({ inherited: 1 }) as object, p),
    ];
    let packed = 0;
    for (const variant of variants) {
      const payload = variant as OrderPayload;
      const roundTrip = sameJson(unpackPayload(packPayload(payload), PACKED_LAYOUT_VERSION), payload);
      const exactly = packPayloadExactly(payload);
      expect(exactly !== undefined, JSON.stringify(variant)).toBe(roundTrip);
      if (exactly !== undefined) {
        expect(exactly).toEqual(packPayload(payload));
        packed++;
      }
    }
    expect(packed).toBeGreaterThan(orders.length);
  });
});

describe('payloadCells, the rows a payload rebuilds', () => {
  it('are payloadLines as text in ORDER_FIELDS order, for odd payloads too', async () => {
    const orders = [
      ...(await samples('samples/gift-orders.csv')),
      ...(await samples('samples/multi-line-orders.csv')),
      ...(await samples('samples/gift-orders.json')),
    ];
    const p = orders[0]!.payload;
    const payloads = [
      ...orders.map((order) => order.payload),
      { ...p, businessCustomerId: true },
      { ...p, recipient: { ...p.recipient, address: 'nowhere', email: 7 } },
      { ...p, recipient: undefined },
      { ...p, products: [{}, { productId: 'x', quantity: null }, { quantity: 2.5 }] },
      { ...p, products: [] },
    ] as OrderPayload[];
    for (const payload of payloads)
      for (const orderRef of ['', 'REF-1'])
        expect(payloadCells(payload, orderRef), JSON.stringify(payload)).toEqual(
          payloadLines(payload, orderRef).map((line) => ORDER_FIELDS.map((field) => String(line[field] ?? ''))),
        );
  });
});

describe('sameJson, the pack check without a JSON round trip', () => {
  it('says what comparing the two JSON texts says', () => {
    const order = { a: 1, b: { c: 'x', d: [1, 2, { e: null }] } };
    const cases: [unknown, unknown][] = [
      [order, structuredClone(order)],
      [order, { b: order.b, a: 1 }], // same members, other order: other JSON
      [order, { ...order, z: undefined }], // undefined members are left out of JSON
      [order, { ...order, a: '1' }],
      [order, { ...order, b: { ...order.b, d: [1, 2] } }],
      [
        [1, undefined],
        [1, null],
      ],
      [[1, 2], { 0: 1, 1: 2 }],
      [{}, []],
      [null, {}],
      ['x', 'x'],
      [{ a: [] }, { a: {} }],
    ];
    for (const [a, b] of cases)
      expect(sameJson(a, b), JSON.stringify([a, b])).toBe(JSON.stringify(a) === JSON.stringify(b));
  });
});

describe('a chunk job as the worker reads it', () => {
  it('names its version and layout, and is refused when either is newer than this code', async () => {
    const orders = await samples('samples/multi-line-orders.csv');
    const data = chunkJob(
      'b1',
      orders.map((order) => toChunkRecord(order, [], ORDERS)),
      ORDERS.payloadCodec!.version,
    );
    expect(data).toMatchObject({ v: JOB_DATA_VERSION, pk: PACKED_LAYOUT_VERSION });
    expect(readJob(data, 'b1.1', ORDERS.payloadCodec).chunk.records.map((record) => record.payload)).toEqual(
      orders.map((order) => order.payload),
    );
    const codeOf = (chunk: ChunkJobData): string => {
      try {
        readJob(chunk, 'b1.1', ORDERS.payloadCodec);
        return 'read';
      } catch (error) {
        return error instanceof JobDataError ? error.code : String(error);
      }
    };
    expect(codeOf({ ...data, v: JOB_DATA_VERSION + 1 })).toBe('JOB_DATA_NEWER');
    expect(codeOf({ ...data, pk: NEWEST_PACKED_LAYOUT + 1 })).toBe('JOB_DATA_NEWER');
    // A job from before versions (no v, no pk) reads in layout 1.
    const { v: _v, pk: _pk, ...before } = data;
    expect(codeOf(before)).toBe('read');
  });
});
