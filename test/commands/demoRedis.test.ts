import { mkdtemp, readdir, rm, writeFile, mkdir, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { redisAnswers, redisInstallHint } from '../../src/redis/localRedis.js';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';
import { sparePort } from '../helpers/privateRedis.js';

const demoRedisDirs = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('bulkorder-demo-redis-'));
const cleanups: string[] = [];
afterEach(async () => {
  await killAllCli();
  await Promise.all(cleanups.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('npm run demo with no Redis running', () => {
  // One whole demo run (each takes many seconds) proves both: a private Redis, and nothing taken from the environment.
  it(
    'starts a private redis-server on a spare port and runs the whole demo on it hermetically (a real API in the environment and a .env beside it: its own simulator, credentials and namespace), then stops it and removes its folder',
    { timeout: 180_000 },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'bulkorder-test-demo-'));
      cleanups.push(dir);
      const before = await demoRedisDirs();
      // A .env of a real setup in the folder it runs from: the demo never reads it.
      await writeFile(
        join(dir, '.env'),
        'BULKORDER_BASE_URL=https://api.vendor.example\nBULKORDER_BUSINESS_CLIENT_ID=from-dotenv\nBULKORDER_BUSINESS_CLIENT_SECRET=dotenv-secret-7f3a\n',
      );
      const secret = 'real-secret-5c9e1d';
      const foreign = {
        BULKORDER_ENV: 'production',
        BULKORDER_CONFIRM_PRODUCTION: 'yes',
        BULKORDER_PRODUCTION_HOSTS: 'api.vendor.example,auth.vendor.example',
        BULKORDER_BASE_URL: 'https://api.vendor.example',
        BULKORDER_AUTH_URL: 'https://auth.vendor.example',
        BULKORDER_USER_AGENT: 'Acme-AcmeTradingBV',
        BULKORDER_BUSINESS_CLIENT_ID: 'real-client',
        BULKORDER_BUSINESS_CLIENT_SECRET: secret,
        BULKORDER_REDIS_PREFIX: 'customer-a',
        BULKORDER_REDIS_CLUSTER_NODES: '127.0.0.1:1',
        BULKORDER_ATTEMPTS: '1',
        BULKORDER_REMOTE_ID_FIELDS: 'nothing.here',
        BULKORDER_NOTIFY_URLS: 'https://hooks.slack.com/services/T000/B000/XXXX',
        REDIS_URL: `redis://127.0.0.1:${await sparePort()}`,
      };
      const demo = startCli(['demo', '--out', join(dir, 'out')], foreign, [], { cwd: dir });
      expect(await demo.exited, demo.output()).toBe(0);
      const said = demo.output();
      expect(said).toMatch(
        /set aside from the environment: .*BULKORDER_ENV, .*BULKORDER_AUTH_URL, .*BULKORDER_BUSINESS_CLIENT_SECRET, .*BULKORDER_REDIS_PREFIX, BULKORDER_REDIS_CLUSTER_NODES/,
      );
      expect(said).toContain(
        './.env is not read by the demo (it sets BULKORDER_BASE_URL, BULKORDER_BUSINESS_CLIENT_ID, BULKORDER_BUSINESS_CLIENT_SECRET)',
      );
      const started = /started a private one for this demo at (redis:\/\/127\.0\.0\.1:\d+)/.exec(demo.stdout())?.[1];
      expect(started, said).toBeDefined();
      expect(demo.stdout()).toMatch(/orders accepted, 0 duplicates/);
      expect(said).not.toContain('no worker is running'); // its workers run in the same process
      expect(said).not.toContain(secret);
      expect(said).not.toContain('dotenv-secret-7f3a');
      expect(await redisAnswers(started!)).toBe(false);
      expect(await demoRedisDirs()).toEqual(before);
    },
  );

  it('without redis-server on the PATH, names the one command that gets a Redis and exits 5', async () => {
    const out = await mkdtemp(join(tmpdir(), 'bulkorder-test-demo-'));
    cleanups.push(out);
    const emptyPath = join(out, 'bin'); // the CLI runs through process.execPath: no PATH needed
    await mkdir(emptyPath);
    const nothingHere = `redis://127.0.0.1:${await sparePort()}`;
    // In this process (runCli): redis-server is looked for on this process's PATH, emptied for the run.
    vi.stubEnv('PATH', emptyPath);
    const demo = await runCli(['demo', '--out', out], { REDIS_URL: nothingHere }).finally(() => vi.unstubAllEnvs());
    expect(demo.code, demo.output).toBe(5);
    expect(demo.output).toMatch(
      /no Redis answers at redis:\/\/127\.0\.0\.1:\d+ and redis-server is not installed\. Get one with `(sudo apt-get install -y redis-server|brew install redis|sudo dnf install -y redis|docker compose up -d redis)`/,
    );
  });

  it('the hint names the package manager the system has, else Docker Compose', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'bulkorder-test-path-'));
    cleanups.push(bin);
    const tool = async (dir: string, name: string) => {
      await mkdir(join(bin, dir), { recursive: true });
      await writeFile(join(bin, dir, name), '#!/bin/sh\n');
      await chmod(join(bin, dir, name), 0o755);
      return join(bin, dir);
    };
    expect(redisInstallHint(await tool('debian', 'apt-get'))).toBe('sudo apt-get install -y redis-server');
    expect(redisInstallHint(await tool('mac', 'brew'))).toBe('brew install redis');
    expect(redisInstallHint(join(bin, 'empty'))).toBe('docker compose up -d redis');
  });

  it('gives up at --max-wait: exit 5 (DEMO_DEADLINE) saying what it waited for', async () => {
    const out = await mkdtemp(join(tmpdir(), 'bulkorder-test-demo-'));
    cleanups.push(out);
    const before = await demoRedisDirs();
    // One second: the demo's six files, its workers and its private Redis take several on any machine.
    const demo = await runCli(['demo', '--out', out, '--max-wait', '1'], {
      REDIS_URL: `redis://127.0.0.1:${await sparePort()}`,
    });
    expect(demo.code, demo.output).toBe(5);
    expect(demo.output).toMatch(
      /the demo gave up after 1 s \(--max-wait\) waiting for (the import of|batch b-\S+ of) \S+/,
    );
    expect(await demoRedisDirs()).toEqual(before); // its private Redis stopped, its folder removed
  }, 120_000);
});
