import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { deliveryRig, HEADER, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

type Mode = 'pass' | 'reset-after-request' | 'trickle';

/**
 * A misbehaving front for the simulator (orders only): it forwards each order, so the
 * simulator stores it, and then answers the client according to `mode` for the next `count`
 * orders. Tokens go straight to the simulator (BULKORDER_AUTH_URL).
 */
async function startFront(
  target: Simulator,
): Promise<{ url: string; set(mode: Mode, count: number): void; close(): Promise<void> }> {
  let mode: Mode = 'pass';
  let left = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const current: Mode = left > 0 ? mode : 'pass';
      if (left > 0) left--;
      const forward = httpRequest(`${target.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          const payload = Buffer.concat(body);
          if (current === 'reset-after-request') {
            req.socket.destroy(); // the order is stored; the client sees its connection reset
          } else if (current === 'trickle') {
            res.writeHead(answer.statusCode ?? 500, {
              'content-type': 'application/json',
              'content-length': String(payload.length),
            });
            let i = 0;
            const drip = setInterval(() => {
              if (i >= payload.length) {
                clearInterval(drip);
                res.end();
              } else res.write(payload.subarray(i, ++i));
            }, 5);
          } else {
            res.writeHead(answer.statusCode ?? 500, {
              'content-type': answer.headers['content-type'] ?? 'application/json',
            });
            res.end(payload);
          }
        });
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    set(next, count) {
      mode = next;
      left = count;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined),
  };
}

let rig: DeliveryRig | undefined;
let front: Awaited<ReturnType<typeof startFront>> | undefined;
let simulator: Simulator | undefined;
afterEach(async () => {
  await rig?.close();
  await front?.close();
  await simulator?.close();
  rig = front = simulator = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

async function deliverThroughFront(name: string, count: number, mode: Mode, faulty: number) {
  simulator = await startSimulator({ seed: 3 });
  front = await startFront(simulator);
  front.set(mode, faulty);
  rig = await deliveryRig(name, {}, { BULKORDER_BASE_URL: front.url, BULKORDER_AUTH_URL: simulator.url });
  await rig.startWorker({ concurrency: 2 });
  const imported = await rig.importFile(await rig.writeFile(`${name}.csv`, ordersCsv(name.toUpperCase(), count)));
  const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, {
    pollMs: 100,
    timeoutMs: 30_000,
    out: quiet,
  });
  return { batch, settled, counters: simulator.counters() };
}

describe('transport faults between the worker and the API', () => {
  it('connection reset after the request was sent: held for review (the order was stored), never re-posted', async () => {
    const r = await deliverThroughFront('reset', 6, 'reset-after-request', 2);
    expect(r.settled).toBe(true);
    expect(r.batch).toMatchObject({ delivered: 4, held: 2, dead: 0 });
    expect(r.counters.ordersAccepted).toBe(6);
    expect(r.counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: 'connection reset after the request was sent (the API had stored it)',
      behaviour: 'held for review, never re-posted',
      orders: 6,
      lost: 0,
      duplicates: r.counters.duplicateOrdersAccepted,
      held: r.batch.held,
    });
  }, 60_000);

  it('headers, then a body that trickles byte by byte: delivered once (the status line decides)', async () => {
    const r = await deliverThroughFront('trickle', 4, 'trickle', 4);
    expect(r.batch).toMatchObject({ delivered: 4, held: 0, dead: 0 });
    expect(r.counters.duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: 'response headers, then a body trickling byte by byte',
      behaviour: 'delivered once, remote id read from the slow body',
      orders: 4,
      lost: 0,
      duplicates: r.counters.duplicateOrdersAccepted,
      held: r.batch.held,
    });
  }, 60_000);

  it('connection refused (the API is down), then back: retried (provably not sent), delivered once', async () => {
    simulator = await startSimulator({ seed: 4 });
    const port = new URL(simulator.url).port;
    rig = await deliveryRig(
      'refused',
      {},
      { BULKORDER_BASE_URL: `http://127.0.0.1:${port}`, BULKORDER_AUTH_URL: simulator.url },
    );
    await simulator.close(); // nothing listens on the port now
    const rows = [HEADER];
    for (let i = 1; i <= 5; i++) rows.push(orderRow(`REFUSED-${i}`));
    await rig.startWorker({ concurrency: 2 });
    const imported = await rig.importFile(await rig.writeFile('refused.csv', rows.join('\n') + '\n'));
    await new Promise((res) => setTimeout(res, 1000));
    simulator = await startSimulator({ seed: 4, port: Number(port) });
    const { batch } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 30_000,
      out: quiet,
    });
    expect(batch).toMatchObject({ delivered: 5, held: 0, dead: 0 });
    expect(simulator.counters().duplicateOrdersAccepted).toBe(0);
    recordReliability({
      fault: 'connection refused: the API down for 1 s',
      behaviour: 'retried with backoff (provably not sent), delivered once when back',
      orders: 5,
      lost: 0,
      duplicates: simulator.counters().duplicateOrdersAccepted,
      held: batch.held,
    });
  }, 60_000);
});
