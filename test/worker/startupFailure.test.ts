import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { deliveryRig, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

let rig: DeliveryRig | undefined;
const blockers: Server[] = [];
afterEach(async () => {
  await killAllCli();
  await Promise.all(blockers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  await rig?.close();
  rig = undefined;
});

/** A port some other program holds (a listening socket of this test). */
async function takenPort(port = 0): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  blockers.push(server);
  return (server.address() as { port: number }).port;
}

/** The exit of a process, or 'still running' once 150 s passed on a busy machine (a hang, not slowness, fails the test). */
function exitOrHang(cli: CliProcess): Promise<number | string> {
  return Promise.race([
    cli.exited,
    new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 150_000).unref()),
  ]);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the children a supervisor reported starting (its log lines). */
function childPids(cli: CliProcess): number[] {
  return cli
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; childPid?: number })
    .filter((line) => line.msg === 'worker process started' && line.childPid !== undefined)
    .map((line) => line.childPid!);
}

describe('every start-up failure ends the worker (issue 26, item 6)', () => {
  it('--http-port taken: the worker exits 5 naming the port and closes its Redis connections', async () => {
    rig = await deliveryRig('port-taken');
    const port = await takenPort();
    const worker = startCli(['worker', '--http-port', String(port)], { ...rig.env, LOG_LEVEL: 'info' });
    expect(await exitOrHang(worker), worker.output()).toBe(5);
    // In the worker's own words: its flags are --http-port and --http-host (not the dashboard's --port, --host).
    expect(worker.output()).toContain(
      `cannot listen on 127.0.0.1:${port} (EADDRINUSE): choose another --http-port or --http-host`,
    );
    recordReliability({
      fault: 'worker --http-port already in use',
      behaviour: 'exit 5 naming the port, its Redis connections closed (it used to hang, ignoring SIGTERM)',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 200_000);

  it("--processes 2 with the second child's port taken: the supervisor names the child, stops the other and exits", async () => {
    rig = await deliveryRig('port-taken-child');
    // Child i serves --http-port + i: child 1's port is taken, child 0's is free.
    let base: number;
    for (;;) {
      const free = await takenPort();
      await new Promise((resolve) => blockers.pop()!.close(resolve));
      base = free;
      try {
        await takenPort(base + 1);
        break;
      } catch {
        // base + 1 in use by someone else: try another pair
      }
    }
    const supervisor = startCli(['worker', '--processes', '2', '--http-port', String(base)], {
      ...rig.env,
      LOG_LEVEL: 'info',
    });
    expect(await exitOrHang(supervisor), supervisor.output()).toBe(5);
    expect(supervisor.output()).toMatch(
      new RegExp(`worker process 1 \\(pid \\d+, --http-port ${base + 1}\\) failed to start`),
    );
    const pids = childPids(supervisor);
    expect(pids).toHaveLength(2); // started once each: a child that fails to start is not restarted
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
    recordReliability({
      fault: "worker --processes 2, the second child's --http-port in use",
      behaviour:
        'the supervisor named the child that failed to start, stopped the other and exited 5 (it used to restart it, or leave half the capacity hanging)',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 200_000);

  it('the supervisor SIGKILLed: its children notice the closed IPC channel and exit', async () => {
    rig = await deliveryRig('orphans', {}, { BULKORDER_SHUTDOWN_GRACE_MS: '3000' });
    const supervisor = startCli(['worker', '--processes', '2'], { ...rig.env, LOG_LEVEL: 'info' });
    await waitFor(
      () => (supervisor.output().match(/delivery worker started/g)?.length ?? 0) === 2,
      'both children started',
      150_000,
    );
    const pids = childPids(supervisor);
    expect(pids).toHaveLength(2);
    supervisor.child.kill('SIGKILL');
    await supervisor.exited;
    try {
      await waitFor(() => pids.every((pid) => !isRunning(pid)), 'the orphaned children to exit', 60_000);
    } finally {
      for (const pid of pids) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
    recordReliability({
      fault: 'worker supervisor (--processes 2) SIGKILLed',
      behaviour: 'both children saw the IPC channel close and exited within their grace period; none left running',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 300_000);
});
