import { readFile } from 'node:fs/promises';
import { outputPath } from '../../src/ingest/outputPath.js';
import { afterEach, describe, expect, it } from 'vitest';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, withWorkerOnceRead, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/**
 * `bulkorder import <file> --wait` in this process; its exit code and output. Its worker starts once the file is read
 * and stops when the import ends (withWorkerOnceRead): importing beside a worker is not what this file tests.
 */
async function importWait(file: string): Promise<{ exit: number | string; output: string }> {
  const running = runCli(['import', file, '--wait'], { ...rig!.env, LOG_LEVEL: 'warn' });
  const cli = await withWorkerOnceRead(rig!, file, running, { concurrency: 4 });
  return { exit: cli.code, output: cli.output };
}

const ANONYMOUS_HEADER = HEADER.replace('orderRef,', '');

/** A row of a file without orderRef (its key is the hash of its content). */
function anonymousRow(email: string): string {
  return `1001,Bram,Jansen,Dorpsstraat,3,1234 AB,Utrecht,NL,nl,${email},+31612345678,5002,1`;
}

describe('the ledger remembers content (real Redis, simulator, real CLI)', () => {
  it('a reused orderRef with other content is a conflict: nothing sent, ORDER_REF_REUSED in rejects and results, exit 4', async () => {
    rig = await deliveryRig('reuse');
    const first = await rig.writeFile(
      'night1.csv',
      [HEADER, orderRow('GIFT-2025-0001', 5001, 1), orderRow('GIFT-2025-0002')].join('\n') + '\n',
    );
    expect((await importWait(first)).exit).toBe(0);
    expect(rig.simulator.counters().ordersAccepted).toBe(2);

    // Next month: the same orderRef with another recipient, product and quantity; one new gift;
    // one unchanged order (same content: already delivered, fine).
    const other = orderRow('GIFT-2025-0001', 5003, 4).replace('Anna,de Vries', 'Piet,Bakker');
    const second = await rig.writeFile(
      'night2.csv',
      [HEADER, other, orderRow('GIFT-2025-0003'), orderRow('GIFT-2025-0002')].join('\n') + '\n',
    );
    const run = await importWait(second);
    expect(run.exit).toBe(4);
    expect(run.output).toMatch(/NOT SENT: 1 order\(s\) reuse an orderRef/);
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(3); // only GIFT-2025-0003 was new
    const rejects = await readFile(outputPath(second, 'rejects'), 'utf8');
    expect(rejects).toMatch(/ORDER_REF_REUSED/);
    expect(rejects).toMatch(/GIFT-2025-0001/);
    expect(rejects).toMatch(
      /used before by batch b-\S+ on \d{4}-\d\d-\d\d \(delivered\) for an order with different products and recipient: not sent/,
    );
    const results = await readFile(outputPath(second, 'results'), 'utf8');
    const reusedRow = results.split('\n').find((line) => line.includes('GIFT-2025-0001'))!;
    expect(reusedRow).toMatch(/,2,rejected,.*ORDER_REF_REUSED/);
    expect(results.split('\n').find((line) => line.includes('GIFT-2025-0002'))).toMatch(/already-delivered/);
    recordReliability({
      fault: 'orderRef reused next month with another recipient, product and quantity',
      behaviour:
        'conflict ORDER_REF_REUSED (line, earlier batch and date, what differs) in rejects and results; not sent; exit 4',
      orders: 3,
      lost: 0,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 240_000);

  it('a dead-lettered orderRef comes back with new content (the fix-and-reimport path) and is delivered', async () => {
    rig = await deliveryRig('fixpath');
    const broken = await rig.writeFile(
      'broken.csv',
      [HEADER, orderRow('GIFT-FIX', 5999, 1), orderRow('GIFT-OK')].join('\n') + '\n',
    );
    const run = await importWait(broken);
    expect(run.exit).toBe(4); // GIFT-FIX refused: unknown product
    expect(rig.simulator.counters().ordersAccepted).toBe(1);
    const fixed = await rig.writeFile('fixed.csv', [HEADER, orderRow('GIFT-FIX', 5001, 1)].join('\n') + '\n');
    const rerun = await importWait(fixed);
    expect(rerun.output).not.toMatch(/ORDER_REF_REUSED/);
    expect(rerun.exit).toBe(0);
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(2);
    recordReliability({
      fault: 'dead-lettered order fixed and imported again with new content',
      behaviour: 'not a conflict: the fixed order was sent and delivered; exit 0',
      orders: 2,
      lost: 2 - counters.ordersAccepted,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 240_000);

  it('orders without orderRef identical to ones delivered before are skipped, counted and named, with the advice', async () => {
    rig = await deliveryRig('identical');
    const first = await rig.writeFile('jan.csv', [ANONYMOUS_HEADER, anonymousRow('bram@example.nl')].join('\n') + '\n');
    const jan = await importWait(first);
    expect(jan.exit, jan.output).toBe(0);
    const second = await rig.writeFile(
      'feb.csv',
      [ANONYMOUS_HEADER, anonymousRow('new@example.nl'), anonymousRow('bram@example.nl')].join('\n') + '\n',
    );
    const run = await importWait(second);
    expect(run.exit, run.output).toBe(0); // already delivered with the same content
    expect(run.output).toMatch(/skipped as identical to orders delivered before: 1 without orderRef \(lines 3\)/);
    expect(run.output).toMatch(/give each an orderRef/);
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(2);
    recordReliability({
      fault: 'order without orderRef identical to one delivered last month',
      behaviour:
        'skipped as already delivered, counted and named by line in the summary with the advice to give new gifts an orderRef',
      orders: 2,
      lost: 0,
      duplicates: counters.duplicateOrdersAccepted,
      held: 0,
    });
  }, 240_000);
});
