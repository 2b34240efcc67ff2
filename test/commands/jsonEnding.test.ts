/**
 * `--json` always ends with one object on stdout (issue 26, item 11): also when Redis does not
 * answer, a disk refuses the output, or SIGTERM stops an import. The real CLI, stdout parsed whole.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { TEST_REDIS_URL } from '../helpers/redis.js';
import { startTcpGate, type TcpGate } from '../helpers/tcpGate.js';
import { canMount, tmpfs, unmountAll } from '../helpers/tmpfs.js';
import { deliveryRig, HEADER, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
let gate: TcpGate | undefined;
afterEach(async () => {
  await killAllCli();
  await gate?.close();
  gate = undefined;
  await unmountAll();
  await rig?.close();
  rig = undefined;
});

/** stdout must be exactly one JSON document (JSON.parse refuses two objects or trailing text). */
function oneObject(p: CliProcess): Record<string, any> {
  try {
    return JSON.parse(p.stdout()) as Record<string, any>;
  } catch {
    throw new Error(`stdout is not one JSON document:\n${p.output()}`);
  }
}

const mountable = await canMount();

/** A local port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('--json ends with one object whatever stops the run', () => {
  it('Redis not answering: one object with exit code 5', async () => {
    rig = await deliveryRig('jsonend-redis');
    const file = await rig.writeFile('orders.csv', ordersCsv('JR', 3));
    const p = startCli(['import', file, '--json'], {
      ...rig.env,
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
    });
    expect(await p.exited, p.output()).toBe(5);
    expect(oneObject(p)).toMatchObject({
      refused: { exitCode: 5 },
      exitCode: 5,
      exitMeaning: 'infrastructure unavailable (Redis, API, token endpoint)',
    });
  }, 60_000);

  it('Redis lost while import --wait follows the batch: one object with exit code 5', async () => {
    rig = await deliveryRig('jsonend-lost');
    gate = await startTcpGate(TEST_REDIS_URL.replace('redis:', 'http:'));
    const file = await rig.writeFile('orders.csv', ordersCsv('JL', 2));
    // No worker: the import queues its orders, then waits for them until Redis goes away.
    const p = startCli(['import', file, '--wait', '--json'], {
      ...rig.env,
      REDIS_URL: gate.url.replace('http:', 'redis:'),
    });
    const batches = rig.services.batches;
    await waitFor(
      async () => (await batches.list()).some((b) => b.importState === 'imported'),
      'the import to queue its orders',
      60_000,
    );
    await gate.down();
    expect(await p.exited, p.output()).toBe(5);
    expect(oneObject(p)).toMatchObject({ refused: { exitCode: 5 }, exitCode: 5 });
  }, 120_000);

  it.skipIf(!mountable)(
    'a disk error (rejects on a read-only mount): one object with exit code 5 (OUTPUT_NOT_WRITABLE) naming the path',
    async () => {
      rig = await deliveryRig('jsonend-disk');
      const file = await rig.writeFile(
        'mixed.csv',
        [HEADER, orderRow('JD-1'), orderRow('JD-2').replace('anna.jd-2@example.nl', 'not-an-email')].join('\n') + '\n',
      );
      const dir = await tmpfs('64k');
      execFileSync('mount', ['-o', 'remount,ro', dir]);
      const p = startCli(['import', file, '--rejects', join(dir, 'mixed.rejects.csv'), '--json'], rig.env);
      expect(await p.exited, p.output()).toBe(5);
      const json = oneObject(p);
      expect(json).toMatchObject({ refused: { code: 'OUTPUT_NOT_WRITABLE', exitCode: 5 }, exitCode: 5 });
      expect(json.refused.message).toContain(join(dir, 'mixed.rejects.csv'));
    },
    60_000,
  );

  it('a usage error commander finds: one object with exit code 2', async () => {
    const p = startCli(['import', 'x.csv', '--no-such-flag', '--json'], {});
    expect(await p.exited, p.output()).toBe(2);
    expect(oneObject(p)).toMatchObject({
      refused: { code: 'commander.unknownOption', exitCode: 2 },
      exitCode: 2,
      exitMeaning: 'usage or configuration error',
    });
  }, 60_000);

  it('SIGTERM while import --wait follows a slow delivery: one object saying it was interrupted, exit 143', async () => {
    rig = await deliveryRig('jsonend-signal', { faults: { latencyMs: 60_000 } });
    const file = await rig.writeFile('orders.csv', ordersCsv('JS', 2));
    startCli(['worker', '--concurrency', '1'], rig.env);
    const p = startCli(['import', file, '--wait', '--json'], rig.env);
    const simulator = rig.simulator;
    await waitFor(() => simulator.counters().requests > 0, 'the worker to send an order', 60_000);
    p.child.kill('SIGTERM');
    expect(await p.exited, p.output()).toBe(143);
    expect(oneObject(p)).toMatchObject({
      refused: { code: 'INTERRUPTED', exitCode: 143 },
      exitCode: 143,
      exitMeaning: 'stopped by signal 15',
    });
  }, 90_000);
});
