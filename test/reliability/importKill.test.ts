/**
 * An importer SIGKILLed at three points of a 2,500-order file, then run again: every order is
 * delivered exactly once and the dead batch is closed. Beside importCrash.test.ts (a file of its
 * own, so that the two run on vitest's two workers side by side).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isSettled } from '../../src/batches/batchStore.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, waitFor } from '../helpers/cliProcess.js';
import { killImportAt, ORDERS, rerun } from '../helpers/importRuns.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close().catch(() => undefined);
  rig = undefined;
});

describe('an importer killed mid-file (real CLI processes, real Redis, simulator)', () => {
  for (const [queued, waitMs, label] of [
    [500, 0, 'at once'],
    [1000, 12_000, 'after 12 s (past the 10 s import heartbeat)'],
    [1500, 0, 'at once'],
  ] as const) {
    it(`import SIGKILLed once ${queued} of ${ORDERS} orders are queued, re-run ${label}: every order delivered exactly once, exit 0, the dead batch closed`, async () => {
      rig = await deliveryRig(`kill${queued}`);
      const file = await rig.writeFile('night.csv', ordersCsv(`K${queued}`, ORDERS));
      await rig.startWorker({ concurrency: 50 });
      const killed = await killImportAt(rig, file, queued);
      if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
      const run = await rerun(rig, file);
      const counters = rig.simulator.counters();
      expect(run.exit, run.output).toBe(0);
      expect(counters.ordersAccepted).toBe(ORDERS);
      expect(counters.duplicateOrdersAccepted).toBe(0);
      // A re-run at once may finish before the dead importer's heartbeat (10 s) lapses: the workers'
      // reconciler closes the crashed batch within seconds after that.
      const batches = rig.services.batches;
      await waitFor(
        async () => (await batches.get(killed.id))?.importState === 'interrupted',
        'the crashed batch closed as interrupted',
        30_000,
      );
      const crashed = (await batches.get(killed.id))!;
      expect(crashed.importState).toBe('interrupted');
      expect(isSettled(crashed)).toBe(true);
      recordReliability({
        fault: `import SIGKILLed once ${queued} of ${ORDERS} orders were queued, re-run ${label}`,
        behaviour:
          'crashed batch closed as interrupted; its reserved orders queued by a reconciler; re-run --wait followed them; exit 0',
        orders: ORDERS,
        lost: ORDERS - counters.ordersAccepted,
        duplicates: counters.duplicateOrdersAccepted,
        held: 0,
      });
    }, 300_000);
  }
});
