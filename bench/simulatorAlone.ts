/**
 * How many requests per second the simulator answers on its own, with no injected latency,
 * so we know it is never the bottleneck of the delivery benchmarks.
 *
 *   npx tsx bench/simulatorAlone.ts [requests=50000] [concurrency=64] [url]
 *
 * Without `url` the simulator runs in this process (client and server share one thread, so
 * the figure is a floor); with `url` it targets a simulator started apart, e.g.
 * `bulkorder simulator --port 8080`, and reads its counters over /__admin. One undici Pool
 * with `concurrency` connections; `concurrency` loops send distinct valid orders back to back.
 */
import { Pool } from 'undici';
import { DEFAULT_CREDENTIALS, startSimulator, type SimulatorCounters } from '../src/simulator/index.js';

const total = Number(process.argv[2] ?? 50_000);
const concurrency = Number(process.argv[3] ?? 64);
const external = process.argv[4];

const simulator = external === undefined ? await startSimulator({ retainOrders: false }) : undefined;
const url = external ?? simulator?.url ?? '';
const pool = new Pool(url, { connections: concurrency, pipelining: 1 });

const { clientId, clientSecret } = DEFAULT_CREDENTIALS.business;
const tokenAnswer = await pool.request({
  path: '/oauth2/token',
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  }).toString(),
});
const { access_token: token } = (await tokenAnswer.body.json()) as { access_token: string };
const headers = {
  authorization: `Bearer ${token}`,
  'user-agent': 'Bench-BulkorderBench',
  'content-type': 'application/json',
};

// Distinct orders (street number, e-mail, product and quantity vary) so duplicate counting does real work.
function orderBody(i: number): string {
  return JSON.stringify({
    businessCustomerId: 1001 + (i % 10),
    recipient: {
      address: {
        firstName: 'Anna',
        lastName: 'de Vries',
        street: 'Oudegracht',
        streetNumber: 1 + (i % 9000),
        postalCode: '3511 AB',
        city: 'Utrecht',
        countryCode: 'NL',
      },
      languageCode: 'nl',
      email: `anna${i}@example.nl`,
      telephoneNumber: '+31612345678',
    },
    products: [{ productId: 5001 + (i % 50), quantity: 1 + (i % 100) }],
  });
}

/** Sends orders `from`..`to`-1 over `concurrency` loops; returns how many were not 201. */
async function run(from: number, to: number): Promise<number> {
  let next = from;
  let failed = 0;
  const loop = async (): Promise<void> => {
    while (next < to) {
      const answer = await pool.request({
        path: '/business-api/orders',
        method: 'POST',
        headers,
        body: orderBody(next++),
      });
      await answer.body.dump();
      if (answer.statusCode !== 201) failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return failed;
}

async function admin(path: string, method: 'GET' | 'POST'): Promise<unknown> {
  const answer = await pool.request({ path: `/__admin/${path}`, method });
  return answer.body.json();
}

// Warm up the JIT and open the connections, then measure from a clean slate.
await run(total, total + Math.min(5000, total));
await admin('reset', 'POST');
const started = process.hrtime.bigint();
const failed = await run(0, total);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const counters = (await admin('counters', 'GET')) as SimulatorCounters;

process.stdout.write(
  `simulator alone (${external === undefined ? 'in-process' : 'separate process'}): ${total} requests, concurrency ${concurrency}: ` +
    `${(total / seconds).toFixed(0)} req/s (${seconds.toFixed(2)} s; ${failed} not 201; accepted ${counters.ordersAccepted}, ` +
    `duplicates ${counters.duplicateOrdersAccepted})\n`,
);
await pool.close();
await simulator?.close();
