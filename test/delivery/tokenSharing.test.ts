/**
 * The target: one token request per token lifetime per API, however many processes.
 * Three real processes post orders against one simulator with a 1 s token lifetime; the
 * simulator counts the token requests.
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

function runChild(env: Record<string, string>): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Record<string, number>) : reject(new Error(`child exited ${code}: ${err}`))));
  });
}

it('three processes share one token: one token request per lifetime', async () => {
  simulator = await startSimulator({ tokenLifetimeSeconds: 1, seed: 3 });
  const durationMs = 3500;
  // A common start, after every child has loaded, so the window is the same for all.
  const startAt = Date.now() + 4000;
  const env = {
    BULKORDER_BASE_URL: simulator.url,
    BULKORDER_USER_AGENT: USER_AGENT,
    BULKORDER_BUSINESS_CLIENT_ID: simulator.credentials.business.clientId,
    BULKORDER_BUSINESS_CLIENT_SECRET: simulator.credentials.business.clientSecret,
    REDIS_URL: TEST_REDIS_URL,
    PREFIX: prefix,
    START_AT: String(startAt),
    END_AT: String(startAt + durationMs),
  };
  const tallies = await Promise.all([runChild(env), runChild(env), runChild(env)]);
  for (const tally of tallies) {
    expect(Object.keys(tally)).toEqual(['delivered']);
    expect(tally.delivered).toBeGreaterThan(10);
  }
  const counters = simulator.counters();
  expect(counters.tokenRequests.business).toBeGreaterThanOrEqual(Math.floor(durationMs / 1000));
  expect(counters.tokenRequests.business).toBeLessThanOrEqual(Math.floor(durationMs / 1000) + 1);
  expect(counters.ordersAccepted).toBe(tallies.reduce((sum, t) => sum + (t.delivered ?? 0), 0));
}, 30_000);
