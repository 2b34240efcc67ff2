import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createAgent, fetchToken, postApi, validOrder } from './simulatorHarness.js';

let sim: Simulator;
let agent: Agent;
let token: string;

beforeAll(async () => {
  sim = await startSimulator({ customers: [1001, 2002], products: [5001, 5002, 7000] });
  agent = createAgent();
  token = await fetchToken(agent, sim);
});
afterAll(async () => {
  await agent.close();
  await sim.close();
});
beforeEach(() => sim.reset());

function post(body: unknown) {
  return postApi(agent, sim, '/business-api/orders', token, body);
}

/** A valid order with `change` applied to a deep copy. */
function orderWith(change: (order: any) => void): any {
  const order = validOrder();
  change(order);
  return order;
}

describe('POST /business-api/orders: success', () => {
  it('stores a valid order and answers 201 {orderId: SIM-<n>, status: received}', async () => {
    const first = await post(validOrder());
    expect(first.status).toBe(201);
    expect(first.json).toEqual({ orderId: 'SIM-1', status: 'received' });
    const second = await post(orderWith((o) => (o.products[0].quantity = 3)));
    expect(second.json.orderId).toBe('SIM-2');
    const orders = sim.orders();
    expect(orders.map((o) => o.orderId)).toEqual(['SIM-1', 'SIM-2']);
    expect(orders[0]?.payload).toEqual(validOrder());
    expect(Date.parse(orders[0]?.receivedAt ?? '')).not.toBeNaN();
    expect(sim.counters().ordersAccepted).toBe(2);
    expect(sim.counters().duplicateOrdersAccepted).toBe(0);
  });

  it('counts the same canonical payload stored again as a duplicate, whatever its key order', async () => {
    await post(validOrder());
    const o = validOrder();
    const reordered = {
      products: o.products,
      recipient: { telephoneNumber: o.recipient.telephoneNumber, ...o.recipient },
      businessCustomerId: o.businessCustomerId,
    };
    const again = await post(reordered);
    expect(again.status).toBe(201);
    expect(again.json.orderId).toBe('SIM-2');
    expect(sim.counters().ordersAccepted).toBe(2);
    expect(sim.counters().duplicateOrdersAccepted).toBe(1);
  });

  it('accepts up to 50 product lines and quantities up to 100', async () => {
    const lines = Array.from({ length: 50 }, () => ({ productId: 5002, quantity: 100 }));
    expect((await post(orderWith((o) => (o.products = lines)))).status).toBe(201);
  });
});

describe('POST /business-api/orders: 400 VALIDATION_FAILED', () => {
  it.each<[string, (o: any) => void, string, RegExp]>([
    ['an unknown top-level field', (o) => (o.orderRef = 'A1'), 'orderRef', /not a known field/],
    ['an unknown recipient field', (o) => (o.recipient.name = 'x'), 'recipient.name', /not a known field/],
    [
      'an unknown address field',
      (o) => (o.recipient.address.houseNumberSuffix = 'a'),
      'recipient.address.houseNumberSuffix',
      /not a known field/,
    ],
    ['an unknown product line field', (o) => (o.products[0].price = 1), 'products[0].price', /not a known field/],
    ['a missing businessCustomerId', (o) => delete o.businessCustomerId, 'businessCustomerId', /required/],
    ['a businessCustomerId as text', (o) => (o.businessCustomerId = '1001'), 'businessCustomerId', /integer/],
    ['a fractional businessCustomerId', (o) => (o.businessCustomerId = 1001.5), 'businessCustomerId', /integer/],
    ['a zero businessCustomerId', (o) => (o.businessCustomerId = 0), 'businessCustomerId', /greater than 0/],
    ['an unsafe integer', (o) => (o.businessCustomerId = 2 ** 60), 'businessCustomerId', /too large/],
    ['a missing recipient', (o) => delete o.recipient, 'recipient', /required/],
    ['a recipient that is an array', (o) => (o.recipient = []), 'recipient', /object/],
    ['a missing address', (o) => delete o.recipient.address, 'recipient.address', /required/],
    ['a blank firstName', (o) => (o.recipient.address.firstName = '  '), 'recipient.address.firstName', /blank/],
    ['a numeric lastName', (o) => (o.recipient.address.lastName = 12), 'recipient.address.lastName', /string/],
    [
      'a street with a newline',
      (o) => (o.recipient.address.street = 'Main\nStreet'),
      'recipient.address.street',
      /control/,
    ],
    [
      'a 101-character city',
      (o) => (o.recipient.address.city = 'x'.repeat(101)),
      'recipient.address.city',
      /at most 100/,
    ],
    [
      'a 17-character postal code',
      (o) => (o.recipient.address.postalCode = '1'.repeat(17)),
      'recipient.address.postalCode',
      /at most 16/,
    ],
    [
      'a streetNumber as text',
      (o) => (o.recipient.address.streetNumber = '12'),
      'recipient.address.streetNumber',
      /integer/,
    ],
    [
      'a negative streetNumber',
      (o) => (o.recipient.address.streetNumber = -1),
      'recipient.address.streetNumber',
      /greater than 0/,
    ],
    [
      'a lowercase countryCode',
      (o) => (o.recipient.address.countryCode = 'nl'),
      'recipient.address.countryCode',
      /uppercase/,
    ],
    [
      'an unassigned countryCode',
      (o) => (o.recipient.address.countryCode = 'XX'),
      'recipient.address.countryCode',
      /not an assigned/,
    ],
    [
      'a three-letter countryCode',
      (o) => (o.recipient.address.countryCode = 'NLD'),
      'recipient.address.countryCode',
      /two-letter/,
    ],
    ['an uppercase languageCode', (o) => (o.recipient.languageCode = 'NL'), 'recipient.languageCode', /lowercase/],
    ['an unknown languageCode', (o) => (o.recipient.languageCode = 'qq'), 'recipient.languageCode', /not an ISO 639-1/],
    ['a languageCode with region', (o) => (o.recipient.languageCode = 'nl-NL'), 'recipient.languageCode', /two-letter/],
    ['an email without @', (o) => (o.recipient.email = 'anna.example.nl'), 'recipient.email', /e-mail/],
    ['an email without a domain dot', (o) => (o.recipient.email = 'anna@localhost'), 'recipient.email', /e-mail/],
    ['an email with a space', (o) => (o.recipient.email = 'anna de@example.nl'), 'recipient.email', /e-mail/],
    ['an email with two dots', (o) => (o.recipient.email = 'anna..x@example.nl'), 'recipient.email', /e-mail/],
    [
      'a phone without plus',
      (o) => (o.recipient.telephoneNumber = '0612345678'),
      'recipient.telephoneNumber',
      /E\.164/,
    ],
    [
      'a phone with spaces',
      (o) => (o.recipient.telephoneNumber = '+31 6 12345678'),
      'recipient.telephoneNumber',
      /E\.164/,
    ],
    [
      'a phone too short for its country',
      (o) => (o.recipient.telephoneNumber = '+3161234567'),
      'recipient.telephoneNumber',
      /not a valid phone/,
    ],
    ['a missing products list', (o) => delete o.products, 'products', /required/],
    ['products that is an object', (o) => (o.products = { productId: 5001, quantity: 1 }), 'products', /array/],
    ['no product lines', (o) => (o.products = []), 'products', /at least one/],
    [
      '51 product lines',
      (o) => (o.products = Array.from({ length: 51 }, () => ({ productId: 5001, quantity: 1 }))),
      'products',
      /at most 50/,
    ],
    ['a product line that is a number', (o) => (o.products = [5001]), 'products[0]', /object/],
    ['a zero quantity', (o) => (o.products[0].quantity = 0), 'products[0].quantity', /greater than 0/],
    ['a quantity as text', (o) => (o.products[0].quantity = '2'), 'products[0].quantity', /integer/],
    ['a missing productId', (o) => delete o.products[0].productId, 'products[0].productId', /required/],
  ])('refuses %s', async (_, change, path, problem) => {
    const reply = await post(orderWith(change));
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('VALIDATION_FAILED');
    expect(reply.json.message).toEqual(expect.any(String));
    expect(reply.json.details).toContainEqual({ path, problem: expect.stringMatching(problem) });
    expect(sim.counters().ordersAccepted).toBe(0);
  });

  it('lists every problem of an order, not only the first', async () => {
    const reply = await post(
      orderWith((o) => {
        o.businessCustomerId = -5;
        o.recipient.email = 'nope';
        o.recipient.address.countryCode = 'ZZ';
        o.products[0].quantity = 1.5;
        o.extra = true;
      }),
    );
    expect(reply.json.details.map((d: { path: string }) => d.path).sort()).toEqual(
      [
        'businessCustomerId',
        'extra',
        'products[0].quantity',
        'recipient.address.countryCode',
        'recipient.email',
      ].sort(),
    );
  });

  it.each([
    ['an array', []],
    ['a string', 'order'],
    ['null', null],
  ])('refuses a body that is %s', async (_, body) => {
    const reply = await post(JSON.stringify(body));
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('VALIDATION_FAILED');
  });
});

describe('POST /business-api/orders: 422 catalogue rules', () => {
  it('refuses an unknown businessCustomerId with CUSTOMER_UNKNOWN', async () => {
    const reply = await post(orderWith((o) => (o.businessCustomerId = 1002)));
    expect(reply.status).toBe(422);
    expect(reply.json).toEqual({
      code: 'CUSTOMER_UNKNOWN',
      message: expect.any(String),
      details: [{ path: 'businessCustomerId', problem: expect.any(String) }],
    });
  });

  it('refuses unknown productIds with PRODUCT_UNKNOWN naming each line', async () => {
    const reply = await post(
      orderWith(
        (o) =>
          (o.products = [
            { productId: 5001, quantity: 1 },
            { productId: 6000, quantity: 1 },
            { productId: 6001, quantity: 1 },
          ]),
      ),
    );
    expect(reply.status).toBe(422);
    expect(reply.json.code).toBe('PRODUCT_UNKNOWN');
    expect(reply.json.details.map((d: { path: string }) => d.path)).toEqual([
      'products[1].productId',
      'products[2].productId',
    ]);
  });

  it('refuses a quantity above 100 with QUANTITY_LIMIT', async () => {
    const reply = await post(orderWith((o) => (o.products[0].quantity = 101)));
    expect(reply.status).toBe(422);
    expect(reply.json.code).toBe('QUANTITY_LIMIT');
    expect(reply.json.details).toEqual([{ path: 'products[0].quantity', problem: expect.any(String) }]);
  });

  it('takes customers and products from the options', async () => {
    const reply = await post(orderWith((o) => ((o.businessCustomerId = 2002), (o.products[0].productId = 7000))));
    expect(reply.status).toBe(201);
    expect(sim.counters().errors).toEqual({});
  });
});
