/**
 * The Redis password is a secret (issue 26, item 7): every command's output, the dashboard's pages
 * and /readyz are searched for a canary password given in REDIS_URL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/startDashboard.js';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { deliveryRig, type DeliveryRig } from '../helpers/deliveryRig.js';
import { TEST_REDIS_URL } from '../helpers/redis.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { runCli } from '../helpers/runCli.js';

const CANARY = 'canary-redis-9d2e71-do-not-print';

/** The test Redis with a password in its URL (it requires none, so every command still works). */
function canaryUrl(base = TEST_REDIS_URL): string {
  const url = new URL(base);
  url.password = CANARY;
  return url.toString();
}

let rig: DeliveryRig | undefined;
let dashboard: RunningDashboard | undefined;
afterEach(async () => {
  await killAllCli();
  await dashboard?.close();
  dashboard = undefined;
  await rig?.close();
  rig = undefined;
});

/**
 * Runs one command: as a real process (`spawned`), whose every byte on stdout and stderr is searched, or in
 * this process through `main` (the same code, without a node and tsx start per command).
 */
async function run(
  args: string[],
  env: Record<string, string>,
  how: 'spawned' | 'in-process',
): Promise<{ exit: number | string; output: string }> {
  if (how === 'in-process') {
    const cli = await runCli(args, env);
    return { exit: cli.code, output: cli.output };
  }
  const cli = startCli(args, env);
  const exit = await cli.exited;
  return { exit, output: cli.output() };
}

describe('REDIS_URL is a secret wherever it is printed', () => {
  it('no command, error, dashboard page or /readyz shows the Redis password; the host still shows', async () => {
    rig = await deliveryRig('redis-canary', {}, { REDIS_URL: canaryUrl() });
    const env = { ...rig.env, LOG_LEVEL: 'debug' };
    const file = await rig.writeFile('bad.csv', 'orderRef,quantity\nR-1,x\n');
    const outputs: Record<string, string> = {};
    // A few as real processes (anything a module writes straight to the process's stderr is searched too), the
    // rest in process.
    const commands: Record<string, [string[], 'spawned' | 'in-process']> = {
      config: [['config'], 'spawned'],
      configJson: [['config', '--json'], 'in-process'],
      status: [['status'], 'spawned'],
      statusJson: [['status', '--json'], 'in-process'],
      help: [['--help'], 'in-process'],
      workerHelp: [['worker', '--help'], 'in-process'],
      importRefused: [['import', file], 'spawned'],
      importJson: [['import', file, '--json'], 'in-process'],
    };
    for (const [name, [args, how]] of Object.entries(commands)) outputs[name] = (await run(args, env, how)).output;
    // Redis gone (a closed port): the error names the URL, masked.
    const down = await run(['status'], { ...env, REDIS_URL: canaryUrl('redis://127.0.0.1:1') }, 'spawned');
    expect(down.exit).toBe(5);
    outputs.redisDown = down.output;
    expect(outputs.redisDown).toContain(`redis://:***@127.0.0.1:1`);
    expect(outputs.config).toMatch(/REDIS_URL\s+redis:\/\/:\*\*\*@127\.0\.0\.1/);

    // A worker's /readyz and /metrics.
    const worker = startCli(['worker', '--http-port', '0'], { ...env, LOG_LEVEL: 'info' });
    await waitFor(
      () => /"url":"(http:[^"]+)","msg":"serving \/metrics/.test(worker.output()),
      'the worker to serve /readyz',
      60_000,
    );
    const workerUrl = /"url":"(http:[^"]+)","msg":"serving \/metrics/.exec(worker.output())![1]!;
    for (const path of ['/readyz', '/healthz', '/metrics'])
      outputs[`worker${path}`] = await (await fetch(workerUrl + path)).text();
    worker.child.kill('SIGTERM');
    await worker.exited;
    outputs.worker = worker.output();

    // The dashboard, every page that reads state.
    dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
    for (const path of [
      '/',
      '/batches',
      '/dead-letters',
      '/held',
      '/schedules',
      '/search?q=R-1',
      '/readyz',
      '/metrics',
      '/dead-letters/export.csv',
    ]) {
      outputs[`dashboard${path}`] = await (await fetch(dashboard.url + path)).text();
    }

    const leaks = Object.entries(outputs)
      .filter(([, text]) => text.includes(CANARY))
      .map(([name]) => name);
    expect(leaks).toEqual([]);
    expect(Object.keys(outputs).length).toBeGreaterThanOrEqual(20);
    recordReliability({
      fault: `a Redis password (canary) in REDIS_URL`,
      behaviour: `found in none of ${Object.keys(outputs).length} outputs (config, status, --help, refused imports, Redis down, worker /readyz /metrics, every dashboard page); the URL shown with ***`,
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 240_000);
});
