import type { Ledger, ReserveResult } from '../../src/ledger/ledger.js';

/** Reserves keys the way every product path does (a kept job), with a stand-in job per key: ledger tests. */
export function reserveKeys(
  ledger: Ledger,
  orderKeys: readonly string[],
  batchId: string,
  force: boolean,
): Promise<ReserveResult[]> {
  return ledger.reserveJobs(
    orderKeys.map((orderKey) => ({ orderKey, job: { name: 'test-job', data: { key: orderKey } } })),
    batchId,
    force,
  );
}
