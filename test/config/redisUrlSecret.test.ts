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
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';

const CANARY = 'canary-redis-9d2e71-do-not-print';

/** The test Redis with a password in its URL (it requires none, so every command still works). */
function canaryUrl(base = TEST_REDIS_URL): string {
  const url = new URL(base);
  url.password = CANARY;
  return url.toString();
}

let rig: DeliveryRig | undefined;
let dashboard: RunningDashboard | undefined;
let privateRedis: PrivateRedis | undefined;
afterEach(async () => {
  await killAllCli();
  await privateRedis?.stop();
  privateRedis = undefined;
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
    const worker = startCli(['worker', '--http-port', '0'], { ...env, LOG_LEVEL: 'info' });
    // The processes run side by side (each waits mostly on its own node start); the in-process ones one at a time.
    const spawned = Object.entries(commands).filter(([, [, how]]) => how === 'spawned');
    // Redis gone (a closed port): the error names the URL, masked.
    const [down, ...ran] = await Promise.all([
      run(['status'], { ...env, REDIS_URL: canaryUrl('redis://127.0.0.1:1') }, 'spawned'),
      ...spawned.map(([, [args]]) => run(args, env, 'spawned')),
    ]);
    for (const [i, [name]] of spawned.entries()) outputs[name] = ran[i]!.output;
    for (const [name, [args, how]] of Object.entries(commands))
      if (how === 'in-process') outputs[name] = (await run(args, env, how)).output;
    expect(down.exit).toBe(5);
    outputs.redisDown = down.output;
    expect(outputs.redisDown).toContain(`redis://:***@127.0.0.1:1`);
    expect(outputs.config).toMatch(/REDIS_URL\s+redis:\/\/:\*\*\*@127\.0\.0\.1/);

    // A worker's /readyz and /metrics (started above, beside the commands).
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

describe('every form of a Redis credential is masked', () => {
  it('?password= (which ioredis honours), a lone user name, a wrong password, cluster nodes: never in clear, never [object Object]', async () => {
    const QUERY_CANARY = 'canary-query-3b7f0a-do-not-print';
    const USER_CANARY = 'canary-user-8e21c4-do-not-print';
    privateRedis = await startPrivateRedis([
      '--requirepass',
      QUERY_CANARY,
      '--appendonly',
      'yes',
      '--maxmemory-policy',
      'noeviction',
    ]);
    const port = new URL(privateRedis.url).port;
    rig = await deliveryRig('redis-query-canary');
    const env = { ...rig.env, LOG_LEVEL: 'debug', REDIS_URL: `redis://127.0.0.1:${port}/?password=${QUERY_CANARY}` };
    const file = await rig.writeFile('bad.csv', 'orderRef,quantity\nR-1,x\n');
    const outputs: Record<string, string> = {};
    // The real processes of this test start side by side (each waits mostly on its own node start).
    const wrong = { ...env, REDIS_URL: `redis://127.0.0.1:${port}/?password=${USER_CANARY}` };
    const config = startCli(['config'], env);
    const status = startCli(['status'], env);
    const refused = startCli(['status'], wrong);
    const worker = startCli(['worker'], wrong);
    const lone = startCli(['status'], { ...env, REDIS_URL: `redis://${USER_CANARY}@127.0.0.1:1` });
    expect(await config.exited).toBe(0);
    outputs.config = config.output();
    expect(outputs.config).toMatch(/REDIS_URL\s+redis:\/\/127\.0\.0\.1:\d+\/\?password=\*\*\*/);
    // The password in the query works: ioredis authenticates with it.
    expect(await status.exited).toBe(0);
    outputs.status = status.output();
    for (const [name, args] of Object.entries({
      configJson: ['config', '--json'],
      statusJson: ['status', '--json'],
      importJson: ['import', file, '--json'],
    }))
      outputs[name] = (await runCli(args, env)).output;

    // A wrong password in the query: WRONGPASS, the URL masked, for a command and for a worker.
    expect(await refused.exited).toBe(2);
    outputs.wrongPassword = refused.output();
    expect(outputs.wrongPassword).toMatch(/WRONGPASS/);
    expect(await worker.exited).toBe(2);
    outputs.workerWrongPassword = worker.output();

    // A lone user name (a password written the old way), Redis gone: masked whole.
    expect(await lone.exited).toBe(5);
    outputs.loneUser = lone.output();
    expect(outputs.loneUser).toContain('redis://***@127.0.0.1:1');

    // Cluster nodes print as host:port, the URL's password masked.
    const cluster = {
      ...env,
      REDIS_URL: `redis://:${USER_CANARY}@127.0.0.1:6379`,
      BULKORDER_REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7001',
    };
    const clusterConfig = await runCli(['config'], cluster);
    expect(clusterConfig.output).toMatch(/BULKORDER_REDIS_CLUSTER_NODES\s+10\.0\.0\.1:7000,10\.0\.0\.2:7001/);
    const clusterJson = await runCli(['config', '--json'], cluster);
    expect(clusterJson.stdout).toContain('"10.0.0.1:7000,10.0.0.2:7001"');
    outputs.clusterConfig = clusterConfig.output + clusterJson.output;
    expect(outputs.clusterConfig).not.toContain('[object Object]');

    const leaks = Object.entries(outputs)
      .filter(([, text]) => text.includes(QUERY_CANARY) || text.includes(USER_CANARY))
      .map(([name]) => name);
    expect(leaks).toEqual([]);
  }, 120_000);
});
