/**
 * The target: one token request per token lifetime per API, however many processes.
 * Three real processes post orders at once against one simulator; the simulator counts the
 * token requests: one for all three. (A token's refresh once per lifetime is tokenProvider.test.ts's,
 * on a clock of its own: counted here in seconds, it would depend on how fast this machine runs.)
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { deletePrefix, testPrefix, testRedis, TEST_REDIS_URL } from '../helpers/redis.js';
import { USER_AGENT } from './support/apiRig.js';

const CHILD = join(projectRoot, 'test/delivery/support/tokenLoopChild.ts');
let simulator: Simulator | undefined;
const prefix = testPrefix('token-sharing');
afterEach(async () => {
  await simulator?.close();
  const redis = testRedis();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

interface Child {
  /** Resolves when the child has loaded and waits for its window. */
  ready: Promise<void>;
  /** Gives the child its start (epoch ms) and how many orders to post. */
  go(startAt: number, count: number): void;
  /** The child's tally of outcomes. */
  tally: Promise<Record<string, number>>;
}

function startChild(env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const tally = new Promise<Record<string, number>>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(out.slice('ready\n'.length)) as Record<string, number>)
        : reject(new Error(`child exited ${code}: ${err}`)),
    );
  });
  // A child that dies before it is ready fails the test through `tally`, not by a hang on `ready`.
  void tally.catch(() => markReady());
  return { ready, go: (startAt, count) => child.stdin.end(`${startAt} ${count}\n`), tally };
}

it('three processes share one token: one token request for all three', async () => {
  simulator = await startSimulator({ seed: 3 });
  const perChild = 30;
  const env = {
    BULKORDER_BASE_URL: simulator.url,
    BULKORDER_USER_AGENT: USER_AGENT,
    BULKORDER_BUSINESS_CLIENT_ID: simulator.credentials.business.clientId,
    BULKORDER_BUSINESS_CLIENT_SECRET: simulator.credentials.business.clientSecret,
    REDIS_URL: TEST_REDIS_URL,
    PREFIX: prefix,
  };
  const children = [startChild(env), startChild(env), startChild(env)];
  await Promise.all(children.map((c) => c.ready));
  // A common start once every child has loaded, so that all three need the token at once.
  const startAt = Date.now() + 200;
  for (const c of children) c.go(startAt, perChild);
  const tallies = await Promise.all(children.map((c) => c.tally));
  for (const tally of tallies) expect(tally).toEqual({ delivered: perChild });
  const counters = simulator.counters();
  expect(counters.tokenRequests.business).toBe(1);
  expect(counters.tokensIssued.business).toBe(1);
  expect(counters.ordersAccepted).toBe(tallies.reduce((sum, t) => sum + (t.delivered ?? 0), 0));
}, 90_000);
