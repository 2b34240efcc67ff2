import { describe, expect, it } from 'vitest';
import { ORDERS } from '../../src/kinds/orders.js';
import { packPayload, unpackPayload } from '../../src/ingest/orderShape.js';
import { toChunkRecord } from '../../src/jobData.js';
import type { OrderPayload, ValidRecord } from '../../src/ingest/types.js';

/** Every valid order of a sample file, as an import reads it. */
async function samples(file: string): Promise<ValidRecord<OrderPayload>[]> {
  const source = await ORDERS.openSource(file, {});
  const valid: ValidRecord<OrderPayload>[] = [];
  for await (const item of source.items()) if (item.kind === 'valid') valid.push(item);
  return valid;
}

describe('a payload packed for a chunk job', () => {
  it.each(['samples/gift-orders.csv', 'samples/multi-line-orders.csv', 'samples/gift-orders.json'])('gives back exactly the payload of every order of %s, in fewer bytes', async (file) => {
    const orders = await samples(file);
    expect(orders.length).toBeGreaterThan(0);
    for (const order of orders) {
      const packed = packPayload(order.payload);
      expect(JSON.stringify(unpackPayload(JSON.parse(JSON.stringify(packed)) as unknown))).toBe(JSON.stringify(order.payload));
      expect(JSON.stringify(packed).length).toBeLessThan(JSON.stringify(order.payload).length * 0.75);
    }
  });

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
});
