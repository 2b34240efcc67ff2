/**
 * Every long-running command stops on SIGTERM when its Redis is gone, and a `--json` run prints
 * exactly one object whose exitCode is the process's (src/commands/stopPolicy.ts). Real processes,
 * a private redis-server SIGKILLed under them, the simulator on port 0. A fault-injection file (the
 * faults tier, test/tiers.ts); the same with Redis up: stopOnSignal.test.ts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

/** A short grace period, so a command that hangs on a Redis that is gone is ended by the policy. */
const GRACE = { BULKORDER_SHUTDOWN_GRACE_MS: '4000' };

let rig: DeliveryRig | undefined;
let redis: PrivateRedis | undefined;
afterEach(async () => {
  await killAllCli();
  // A killed Redis comes back (empty) so the rig can clean up its namespace.
  if (redis !== undefined && (redis.process.exitCode !== null || redis.process.signalCode !== null)) {
    await redis.restart();
    await waitFor(() => rig?.services.redis.status === 'ready', 'the rig to reconnect');
  }
  await rig?.close();
  await redis?.stop();
  rig = undefined;
  redis = undefined;
});

/** stdout holds exactly one JSON object, and it tells the exit code the process ended with. */
function oneObject(cli: CliProcess, code: number | string): Record<string, unknown> {
  const json = JSON.parse(cli.stdout()) as Record<string, unknown>; // throws on none or two
  expect(json.exitCode).toBe(code);
  return json;
}

async function rigOnPrivateRedis(name: string): Promise<DeliveryRig> {
  redis = await startPrivateRedis();
  return deliveryRig(name, {}, { REDIS_URL: redis.url, ...GRACE, LOG_LEVEL: 'info' });
}

describe('SIGTERM with Redis gone (SIGKILLed)', () => {
  /** Starts `args`, waits for `ready`, kills Redis, lets the clients notice, then SIGTERMs the command. */
  async function stopWithRedisGone(
    args: (rig: DeliveryRig) => Promise<string[]>,
    ready: (cli: CliProcess, rig: DeliveryRig) => Promise<boolean>,
  ): Promise<CliProcess> {
    rig = await rigOnPrivateRedis('stop-redis-gone');
    const cli = startCli(await args(rig), rig.env);
    await waitFor(() => ready(cli, rig!), 'the command to be running');
    await redis!.kill();
    await new Promise((r) => setTimeout(r, 1_500)); // the clients see the connection go (not a timing assertion)
    cli.child.kill('SIGTERM');
    await cli.exited;
    return cli;
  }
  const dropWithFile = async (r: DeliveryRig): Promise<string> => {
    const drop = join(r.dir, 'drop');
    await mkdir(join(drop, 'inbox'), { recursive: true });
    await writeFile(join(drop, 'inbox', 'orders.csv'), ordersCsv('G', 3));
    return drop;
  };
  const imported = async (_cli: CliProcess, r: DeliveryRig): Promise<boolean> =>
    (await r.services.batches.list(10)).length === 1;

  it('worker: exits (its own code: 0 closed, 5 could not close)', async () => {
    const cli = await stopWithRedisGone(
      async () => ['worker'],
      async (c) => c.output().includes('delivery worker'),
    );
    expect([0, 5]).toContain(await cli.exited);
    row('`worker`', String(await cli.exited));
  }, 120_000);

  it('dashboard: exits', async () => {
    const cli = await stopWithRedisGone(
      async () => ['dashboard', '--port', '0'],
      async (c) => c.stdout().includes('dashboard: http'),
    );
    expect([0, 143]).toContain(await cli.exited);
    row('`dashboard`', String(await cli.exited));
  }, 120_000);

  it('watch --deliver: exits', async () => {
    const cli = await stopWithRedisGone(
      async (r) => ['watch', await dropWithFile(r), '--deliver', '--stable', '0.2', '--poll', '0.05'],
      imported,
    );
    expect([0, 4, 143]).toContain(await cli.exited);
    row('`watch --deliver`', String(await cli.exited));
  }, 120_000);

  it('watch --once --deliver --json: exits 143 with one object', async () => {
    const cli = await stopWithRedisGone(
      async (r) => [
        'watch',
        await dropWithFile(r),
        '--once',
        '--deliver',
        '--json',
        '--stable',
        '0.2',
        '--poll',
        '0.05',
      ],
      imported,
    );
    expect(await cli.exited).toBe(143);
    oneObject(cli, 143);
    row('`watch --once --deliver --json`', '143, one JSON object');
  }, 120_000);

  it('import --wait --json: exits with one object telling its exit code', async () => {
    const cli = await stopWithRedisGone(
      async (r) => ['import', await r.writeFile('orders.csv', ordersCsv('I', 3)), '--wait', '--json'],
      imported,
    );
    const code = await cli.exited;
    expect([5, 143]).toContain(code);
    oneObject(cli, code);
    row('`import --wait --json`', `${code}, one JSON object`);
  }, 120_000);
});

function row(command: string, exit: string): void {
  recordReliability({
    fault: `Redis SIGKILLed, then SIGTERM to ${command}`,
    behaviour: `the process ends within its grace period (BULKORDER_SHUTDOWN_GRACE_MS), exit ${exit}; nothing sent`,
    orders: 0,
    lost: 0,
    duplicates: 0,
    held: 0,
  });
}
