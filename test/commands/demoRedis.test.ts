import { mkdtemp, readdir, rm, writeFile, mkdir, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { redisAnswers, redisInstallHint } from '../../src/localRedis.js';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
import { sparePort } from '../helpers/privateRedis.js';

const demoRedisDirs = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('bulkorder-demo-redis-'));
const cleanups: string[] = [];
afterEach(async () => {
  await killAllCli();
  await Promise.all(cleanups.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('npm run demo with no Redis running', () => {
  it(
    'starts a private redis-server on a spare port, runs the whole demo on it, then stops it and removes its folder',
    { timeout: 180_000 },
    async () => {
      const out = await mkdtemp(join(tmpdir(), 'bulkorder-test-demo-'));
      cleanups.push(out);
      const before = await demoRedisDirs();
      const nothingHere = `redis://127.0.0.1:${await sparePort()}`;
      const demo = startCli(['demo', '--out', out], { REDIS_URL: nothingHere });
      expect(await demo.exited).toBe(0);
      const started = /started a private one for this demo at (redis:\/\/127\.0\.0\.1:\d+)/.exec(demo.stdout())?.[1];
      expect(started, demo.output()).toBeDefined();
      expect(demo.stdout()).toMatch(/orders accepted, 0 duplicates/);
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
    const demo = startCli(['demo', '--out', out], { REDIS_URL: nothingHere, PATH: emptyPath });
    expect(await demo.exited).toBe(5);
    expect(demo.output()).toMatch(
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
});
