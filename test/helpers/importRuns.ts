/**
 * What the import-crash tests share (test/reliability/importCrash.test.ts, importKill.test.ts): two
 * files, so that the slowest crash tests run on both of vitest's workers.
 */
import { expect } from 'vitest';
import type { Batch } from '../../src/batches/batchStore.js';
import { startCli, waitFor } from './cliProcess.js';
import { startTcpGate } from './tcpGate.js';
import type { DeliveryRig } from './deliveryRig.js';
import { withFreshBatches } from './redis.js';
import { runCli } from './runCli.js';

/**
 * Orders per crashed import. The night had 20,000; on the shared 2-core machine importing
 * 20,000 takes ~30 s and delivering them minutes, so each crash point uses 2,500 (the same
 * chunking: 5 chunks of 500; the importer is killed once 500, 1,000 or 1,500 are queued, that is
 * while it works on the second, third or fourth chunk).
 */
export const ORDERS = 2_500;

/** The latest batches, or none while Redis does not answer. */
export function batchesNow(url: string, prefix: string): Promise<Batch[]> {
  return withFreshBatches(url, prefix, (batches) => batches.list(20)).catch(() => []);
}

/** `bulkorder import <file> --wait`, in-process. */
export async function rerun(rig: DeliveryRig, file: string): Promise<{ exit: number | string; output: string }> {
  // --timeout: a run that cannot finish says so (exit 4 with its report) instead of hanging the test.
  const cli = await runCli(['import', file, '--wait', '--timeout', '200'], { ...rig.env, LOG_LEVEL: 'warn' });
  return { exit: cli.code, output: cli.output };
}

/**
 * Starts `bulkorder import <file>` as a real process and SIGKILLs it once its batch has queued `atLeast` orders,
 * while it is still importing. Its Redis traffic runs through a gate the test holds while it looks: an import
 * of a few thousand orders takes well under a second, so without the hold the kill could land after the import
 * ended, and the test would not test a crash mid-file.
 */
export async function killImportAt(rig: DeliveryRig, file: string, atLeast: number): Promise<Batch> {
  const url = rig.config.redisUrl.reveal();
  const gate = await startTcpGate(url.replace(/^rediss?:/, 'http:'));
  try {
    const gated = new URL(url);
    gated.host = new URL(gate.url).host;
    const importer = startCli(['import', file], { ...rig.env, REDIS_URL: gated.toString(), LOG_LEVEL: 'warn' });
    let batch: Batch | undefined;
    await waitFor(
      async () => {
        gate.hold();
        batch = (await batchesNow(url, rig.prefix))[0];
        if ((batch?.enqueued ?? 0) >= atLeast) return true;
        gate.release();
        await new Promise((r) => setTimeout(r, 10));
        return false;
      },
      `${atLeast} orders queued`,
      60_000,
    );
    expect(batch?.importState, 'the importer finished before it could be killed').toBe('importing');
    importer.child.kill('SIGKILL');
    expect(await importer.exited).toBe('SIGKILL');
    return batch!;
  } finally {
    await gate.close();
  }
}
