/**
 * Issue 37, item 2: a least-privilege Redis user. The ACL line of README's "Redis permissions" is
 * read from the README, given to a user of a private redis-server, and import, worker, status and
 * the dashboard run as that user; a second user lacks INFO and CONFIG. Everything works for both,
 * the second is warned about once per process, and `ACL LOG` shows what each was refused.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { projectRoot } from '../../src/paths.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { ordersCsv } from '../helpers/deliveryRig.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { runCli } from '../helpers/runCli.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await killAllCli();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The ACL line README documents, as arguments of ACL SETUSER for `user`, its password and key prefix. */
async function documentedAcl(user: string, password: string, prefix: string): Promise<string[]> {
  const readme = await readFile(join(projectRoot, 'README.md'), 'utf8');
  const line = /<!-- redis-acl -->\n```\n(ACL SETUSER .*)\n```/.exec(readme)?.[1];
  if (line === undefined) throw new Error('README.md has no ```-fenced ACL SETUSER line after <!-- redis-acl -->');
  const [, , name, ...rules] = line.split(/\s+/);
  expect(name).toBe('bulkorder');
  return [
    user,
    ...rules.map((rule) =>
      rule.startsWith('>') ? `>${password}` : rule.startsWith('~') ? rule.replace('bulkorder', prefix) : rule,
    ),
  ];
}

/** What one run of the four commands as `user` saw. */
interface Run {
  outputs: Record<string, string>;
  delivered: number;
  refusedCommands: string[];
}

/** Import (with --wait), a worker, status and the dashboard, all as `user`, against the simulator. */
async function runAs(
  redis: PrivateRedis,
  admin: Redis,
  simulator: Simulator,
  acl: string[],
  name: string,
): Promise<Run> {
  const [user, ...rules] = acl;
  const password = randomBytes(8).toString('hex');
  await admin.call('ACL', 'SETUSER', user!, 'reset', ...rules.map((r) => (r.startsWith('>') ? `>${password}` : r)));
  cleanups.push(() => admin.call('ACL', 'DELUSER', user!));
  const url = new URL(redis.url);
  url.username = user!;
  url.password = password;
  const prefix = /~(.*):\*/.exec(rules.find((r) => r.startsWith('~'))!)![1]!;
  const env = {
    BULKORDER_BASE_URL: simulator.url,
    BULKORDER_USER_AGENT: 'Test-BulkorderTests',
    BULKORDER_BUSINESS_CLIENT_ID: 'sim-business',
    BULKORDER_BUSINESS_CLIENT_SECRET: 'sim-business-secret',
    BULKORDER_REDIS_PREFIX: prefix,
    REDIS_URL: url.toString(),
    BULKORDER_WORKER_PROCESSES: '1',
    // The wedge guard looks (its MULTI of LLEN, ZCARD, HEXISTS, GET) whenever the worker is idle: often, so ACL LOG sees it.
    BULKORDER_WEDGE_CHECK_MS: '200',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  };
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-acl-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, `${name}.csv`);
  await writeFile(file, ordersCsv(name, 30));
  await admin.call('ACL', 'LOG', 'RESET');

  const worker = startCli(['worker', '--http-port', '0'], env);
  const importer = startCli(['import', file, '--wait', '--timeout', '120'], env);
  // Started with the others (it serves its pages only once asked, below): one node start less to wait for.
  const dashboard = startCli(['dashboard', '--port', '0'], env);
  // And status, while the import runs: what it asks Redis is the same whatever the batch's state.
  const status = startCli(['status'], env);
  expect(await importer.exited, importer.output()).toBe(0);
  expect(await status.exited, status.output()).toBe(0);
  // The other commands an operator runs, for what they send Redis (ACL LOG below): in this process
  // (test/helpers/runCli.ts), the same commands to Redis without a node start each. Whether a process warns
  // once is seen on the four real processes above; a refusal of these shows in ACL LOG and in what they print.
  const others: string[] = [];
  for (const args of [
    ['schedule', 'set', 'nightly', '--cron', '0 2 * * *', '--source', dir],
    ['schedule', 'list'],
    ['schedule', 'remove', 'nightly'],
    ['dead-letters', 'list'],
    ['review', 'list'],
    ['watch', join(dir, 'drop'), '--once', '--stable', '0.1', '--poll', '0.05'],
  ]) {
    const cli = await runCli(args, env);
    expect(cli.code, `${args.join(' ')}\n${cli.output}`).toBe(0);
    others.push(cli.output);
  }
  await waitFor(() => /dashboard: (http:\S+)\//.test(dashboard.stdout()), 'the dashboard to listen');
  const dashboardUrl = /dashboard: (http:\S+)\//.exec(dashboard.stdout())![1]!;
  const pages: Record<string, string> = {};
  for (const path of [
    '/',
    '/batches',
    '/batches?after=b-none',
    '/dead-letters',
    '/held',
    '/schedules',
    `/search?q=${name}-1`,
    '/readyz',
    '/metrics',
  ]) {
    const response = await fetch(dashboardUrl + path);
    expect(response.status, path).toBe(200);
    pages[path] = await response.text();
  }
  await stop(dashboard);
  await stop(worker);

  const log = (await admin.call('ACL', 'LOG')) as unknown[][];
  const refusedCommands = log
    .map((entry) => fields(entry))
    .filter((entry) => entry.username === user)
    .map((entry) => `${entry.reason}:${entry.object}`);
  return {
    outputs: {
      worker: worker.output(),
      import: importer.output(),
      status: status.output(),
      dashboard: dashboard.output(),
      others: others.join('\n'),
      ...Object.fromEntries(Object.entries(pages).map(([path, text]) => [`dashboard${path}`, text])),
    },
    delivered: new Set(
      simulator
        .orders()
        .map((order) => order.idempotencyKey ?? '')
        .filter((key) => key.includes(`.${name}-`)),
    ).size,
    refusedCommands: [...new Set(refusedCommands)].sort(),
  };
}

async function stop(cli: CliProcess): Promise<void> {
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);
}

/** An ACL LOG entry (a flat list of names and values) as an object. */
function fields(entry: unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < entry.length; i += 2) out[String(entry[i])] = String(entry[i + 1]);
  return out;
}

const VERIFY_WARNING = /neither CONFIG nor INFO, so whether it evicts keys or persists them cannot be verified/g;

describe('a least-privilege Redis user (the ACL README documents)', () => {
  it('runs import, worker, status and dashboard; without INFO and CONFIG it warns once per process and still works', async () => {
    const redis = await startPrivateRedis(['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']);
    cleanups.push(() => redis.stop());
    const admin = new Redis(redis.url);
    cleanups.push(async () => admin.disconnect());
    const simulator = await startSimulator({ seed: 1 });
    cleanups.push(() => simulator.close());

    const prefix = `bulkorder-acl-${randomBytes(4).toString('hex')}`;
    const documented = await documentedAcl('bulkorder-full', 'x', prefix);
    // The same line without the two commands that only verify Redis (README: what degrades without them).
    const limited = (await documentedAcl('bulkorder-limited', 'x', prefix)).filter(
      (rule) => rule !== '+info' && rule !== '+config|get',
    );
    expect(limited.length).toBe(documented.length - 2);

    const full = await runAs(redis, admin, simulator, documented, 'FULL');
    expect(full.delivered).toBe(30);
    expect(full.refusedCommands).toEqual([]);
    for (const [name, text] of Object.entries(full.outputs)) {
      expect(text.match(VERIFY_WARNING), name).toBeNull();
      expect(text, name).not.toMatch(/NOPERM|internal error|Skipping the ready check/);
    }

    const least = await runAs(redis, admin, simulator, limited, 'LEAST');
    expect(least.delivered).toBe(30);
    // What the user was refused: only the two checks that degrade.
    expect(least.refusedCommands.every((refused) => /^command:(info|config\|get)$/.test(refused))).toBe(true);
    expect(least.refusedCommands).toContain('command:info');
    for (const process of ['worker', 'import', 'status', 'dashboard']) {
      const text = least.outputs[process]!;
      expect(text.match(VERIFY_WARNING), process).toHaveLength(1);
      expect(text, process).toMatch(/production refuses it unless BULKORDER_ALLOW_UNVERIFIED_REDIS=yes/);
      expect(text, process).not.toMatch(/NOPERM|internal error|Skipping the ready check/);
    }
    expect(least.outputs['dashboard/metrics']).toMatch(/bulkorder_workers\{api="business"\} [01]/);
    const keys = simulator.orders().map((order) => order.idempotencyKey);
    expect(keys).toHaveLength(60);
    expect(new Set(keys).size).toBe(60);

    // Production refuses the limited user unless told to accept it.
    const url = new URL(redis.url);
    url.username = 'bulkorder-prod';
    url.password = 'prod-secret';
    await admin.call(
      'ACL',
      'SETUSER',
      'bulkorder-prod',
      'reset',
      ...limited.slice(1).map((r) => (r.startsWith('>') ? '>prod-secret' : r)),
    );
    cleanups.push(() => admin.call('ACL', 'DELUSER', 'bulkorder-prod'));
    const production = {
      BULKORDER_ENV: 'production',
      BULKORDER_CONFIRM_PRODUCTION: 'yes',
      BULKORDER_BASE_URL: 'https://api.vendor.nl',
      BULKORDER_USER_AGENT: 'Test-BulkorderTests',
      BULKORDER_BUSINESS_CLIENT_ID: 'c',
      BULKORDER_BUSINESS_CLIENT_SECRET: 's',
      BULKORDER_REDIS_PREFIX: prefix,
      REDIS_URL: url.toString(),
      LOG_LEVEL: 'silent',
    };
    // Three independent runs of `status`, started together (one node start's wait instead of three).
    const refused = startCli(['status'], production);
    const accepted = startCli(['status'], { ...production, BULKORDER_ALLOW_UNVERIFIED_REDIS: 'yes' });
    // A key pattern that misses the prefix: a configuration error naming Redis's reply, not an internal error.
    const wrongPrefix = startCli(['status'], {
      ...production,
      BULKORDER_ALLOW_UNVERIFIED_REDIS: 'yes',
      BULKORDER_REDIS_PREFIX: 'other',
    });
    expect(await refused.exited).toBe(5);
    expect(refused.output()).toMatch(/Production refuses it; BULKORDER_ALLOW_UNVERIFIED_REDIS=yes runs anyway/);
    expect(await accepted.exited).toBe(0);
    expect(accepted.output().match(VERIFY_WARNING)).toHaveLength(1);
    expect(await wrongPrefix.exited).toBe(2);
    expect(wrongPrefix.output()).toMatch(/REDIS_URL: Redis refused a command or key to its user \(NOPERM/);
    expect(wrongPrefix.output()).not.toMatch(/internal error|prod-secret/);

    recordReliability({
      fault: "a least-privilege Redis user (README's ACL), and one without INFO and CONFIG",
      behaviour:
        'import, worker, status and dashboard ran as either; nothing in ACL LOG for the documented one; without INFO/CONFIG one warning per process, production refused (exit 5) unless BULKORDER_ALLOW_UNVERIFIED_REDIS=yes; a key pattern that misses the prefix: exit 2 REDIS_NO_PERMISSION',
      orders: 60,
      lost: 60 - new Set(keys).size,
      duplicates: keys.length - new Set(keys).size,
      held: 0,
    });
  }, 300_000);
});
