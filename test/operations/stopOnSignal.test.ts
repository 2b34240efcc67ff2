/**
 * Every long-running command stops on SIGTERM, and a `--json` run prints exactly one object whose
 * exitCode is the process's (src/commands/stopPolicy.ts). Real processes, real Redis, the simulator
 * on port 0. With Redis SIGKILLed first (a fault: each waits out its grace period):
 * stopOnSignalRedisGone.test.ts, in the faults tier (test/tiers.ts).
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { readdirSync, readlinkSync } from 'node:fs';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { deliveryRig, HEADER, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

/** A short grace period, so a command that hangs is ended by the policy. */
const GRACE = { BULKORDER_SHUTDOWN_GRACE_MS: '4000' };

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close();
  rig = undefined;
});

/** stdout holds exactly one JSON object, and it tells the exit code the process ended with. */
function oneObject(cli: CliProcess, code: number | string): Record<string, unknown> {
  const json = JSON.parse(cli.stdout()) as Record<string, unknown>; // throws on none or two
  expect(json.exitCode).toBe(code);
  return json;
}

describe('SIGTERM with Redis up', () => {
  it('watch --once --json stopped while following a file: exit 143, one object naming the file left in processing/', async () => {
    rig = await deliveryRig('stop-watch-once', {}, GRACE);
    const drop = join(rig.dir, 'drop');
    await mkdir(join(drop, 'inbox'), { recursive: true });
    await writeFile(join(drop, 'inbox', 'slow.csv'), [HEADER, orderRow('S-1'), orderRow('S-2')].join('\n') + '\n');
    // No worker: the batch cannot settle, so the watcher is still following the file when stopped.
    const watcher = startCli(['watch', drop, '--once', '--json', '--stable', '0.2', '--poll', '0.05'], rig.env);
    await waitFor(async () => (await rig!.services.batches.list(10)).length === 1, 'the file to be imported');
    watcher.child.kill('SIGTERM');
    const code = await watcher.exited;
    expect(code).toBe(143);
    const json = oneObject(watcher, 143);
    expect(json).toMatchObject({ interrupted: { code: 'INTERRUPTED', signal: 'SIGTERM' } });
    expect((json.interrupted as { inProcessing: string[] }).inProcessing).toHaveLength(1);
    expect(json.done).toEqual([]);
    expect((await readdir(join(drop, 'processing'))).filter((n) => !n.startsWith('.'))).toHaveLength(1);
    recordReliability({
      fault: 'SIGTERM to `watch --once --json` while it follows a file',
      behaviour:
        'exit 143, one JSON object naming the file left in processing/ (never "ok"); the next watch resumes it',
      orders: 2,
      lost: 0,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });
  }, 120_000);

  it('validate --json stopped while it reads a large file: one INTERRUPTED object, exit 143', async () => {
    rig = await deliveryRig('stop-validate', {}, GRACE);
    const file = await rig.writeFile('large.csv', ordersCsv('V', 300_000));
    const validate = startCli(['validate', file, '--json'], rig.env);
    // Once validate has the file open it is inside its run (the signal handlers are in place).
    await waitFor(() => isOpenBy(validate, file) || validate.child.exitCode !== null, 'validate to open the file');
    validate.child.kill('SIGTERM');
    expect(await validate.exited).toBe(143);
    expect(oneObject(validate, 143)).toMatchObject({ refused: { code: 'INTERRUPTED', exitCode: 143 } });
  }, 120_000);

  it('dead-letters retry --wait --json with no worker running: one INTERRUPTED object, exit 143', async () => {
    rig = await deliveryRig('stop-retry', {}, GRACE);
    const file = await rig.writeFile('dead.csv', [HEADER, orderRow('D-1', 9999)].join('\n') + '\n');
    await rig.importFile(file);
    // A worker of the test's own (not the rig's): closed before the retry, so nothing delivers it.
    const worker = await startBusinessDelivery(rig.config, rig.logger, {
      prefix: rig.prefix,
      delivery: rig.config.delivery,
    });
    try {
      await waitFor(async () => (await rig!.services.batches.list(10))[0]?.dead === 1, 'the order to be dead-lettered');
    } finally {
      await worker.close();
    }
    const retry = startCli(['dead-letters', 'retry', '--all', '--wait', '--timeout', '600', '--json'], rig.env);
    await waitFor(async () => (await rig!.services.batches.list(10)).length === 2, 'the retry batch');
    retry.child.kill('SIGTERM');
    expect(await retry.exited).toBe(143);
    expect(oneObject(retry, 143)).toMatchObject({ refused: { code: 'INTERRUPTED' } });
  }, 120_000);
});

/** Whether the process has `path` open (Linux: its /proc/<pid>/fd links). */
function isOpenBy(cli: CliProcess, path: string): boolean {
  try {
    const fds = readdirSync(`/proc/${cli.child.pid}/fd`);
    return fds.some((fd) => {
      try {
        return readlinkSync(`/proc/${cli.child.pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}
