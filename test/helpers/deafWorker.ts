import { Writable } from 'node:stream';
import { deliveryRig, ordersCsv, type DeliveryRig } from './deliveryRig.js';
import { startBlockingGate, type BlockingGate } from './blockingGate.js';
import { TEST_REDIS_URL } from './redis.js';
import { waitFor } from './cliProcess.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import type { DeliveryWorker } from '../../src/assembly/deliveryWorker.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics/bulkorderMetrics.js';
import type { WedgeCheckSettings } from '../../src/deliverySettings.js';
import { ORDERS_QUEUE } from '../../src/queues.js';

/** What a wedge-guard test started; each is set as soon as it exists, so afterEach closes it whatever failed. */
export interface WedgeParts {
  rig?: DeliveryRig;
  gate?: BlockingGate;
  worker?: DeliveryWorker<OrderPayload>;
}

/** Closes and forgets what `parts` holds (for afterEach). */
export async function closeWedgeParts(parts: WedgeParts): Promise<void> {
  await parts.worker?.close();
  await parts.rig?.close();
  await parts.gate?.close();
  delete parts.worker;
  delete parts.rig;
  delete parts.gate;
}

/** Orders each deaf-worker test imports (three jobs of ten). */
export const WEDGE_ORDERS = 30;

/** Pino JSON lines written to a stream, kept as objects. */
export function keptLines<T>(): { lines: T[]; destination: Writable } {
  const lines: T[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as T);
      done();
    },
  });
  return { lines, destination };
}

/** A worker through the gate, idle on an empty queue, whose blocking wait the gate then made deaf; then a file imported. */
export async function deafWorker(parts: WedgeParts, name: string, wedgeCheck: WedgeCheckSettings) {
  const gate = await startBlockingGate(TEST_REDIS_URL, ORDERS_QUEUE);
  parts.gate = gate;
  const rig = await deliveryRig(name, {}, { REDIS_URL: gate.url, BULKORDER_ORDERS_PER_JOB: '10' });
  parts.rig = rig;
  const { lines, destination } = keptLines<{ code?: string; msg: string }>();
  const metrics = createMetrics({ processMetrics: false });
  parts.worker = await startBusinessDelivery(rig.config, createLogger({ level: 'warn', destination }), {
    prefix: rig.prefix,
    delivery: { ...rig.config.delivery, wedgeCheck },
    metrics,
  });
  await waitFor(() => gate.blockingConnections() === 1, "the worker's blocking connection");
  gate.deafen();
  await waitFor(() => gate.swallowed() === 1, "the blocking connection's reconnection swallowed");
  const file = await rig.writeFile(`${name}.csv`, ordersCsv(name.toUpperCase(), WEDGE_ORDERS));
  const imported = await rig.importFile(file);
  return { rig, imported, lines, metrics };
}
