/**
 * A command loads the CommonJS packages of src/cjsPackages.ts only when it uses them: `validate` reads a file without
 * Redis, so it loads neither bullmq nor ioredis (loading them cost its 1,000,000-row run 18% more CPU and 10 MiB,
 * BENCHMARKS.md round 15), and piscina only when it starts ingest threads. Observed in the real command (through
 * tsx) by the modules in require's cache at its exit (test/helpers/recordLoads.mjs).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { generateOrders } from '../../bench/generateOrders.js';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
import { tempDir } from '../ingest/ingestHelpers.js';

const sample = join(projectRoot, 'samples/gift-orders.csv');
let tmp: Awaited<ReturnType<typeof tempDir>>;
let spread = '';

beforeAll(async () => {
  tmp = await tempDir();
  // Over 1 MiB, lines of an order up to 5,000 rows apart: read through spill files, where threads may validate.
  spread = join(tmp.dir, 'spread.csv');
  await generateOrders(spread, { rows: 15_000, seed: 3, spread: 5_000 });
});
afterAll(() => tmp.cleanup());
afterEach(killAllCli);

/** The packages of src/cjsPackages.ts that `validate` loaded with `options`. */
async function packagesLoaded(name: string, file: string, options: string[]): Promise<string[]> {
  const loads = join(tmp.dir, `${name}.loads`);
  const cli = startCli(
    ['validate', file, '--out', join(tmp.dir, `${name}.rejects.csv`), ...options],
    { LOG_LEVEL: 'warn', LOADS_FILE: loads },
    ['--import', join(projectRoot, 'test/helpers/recordLoads.mjs')],
  );
  expect(await cli.exited, cli.output()).toBe(0);
  const names = (await readFile(loads, 'utf8')).match(
    /node_modules\/(bullmq|ioredis|piscina|pino-pretty|nodemailer)\//g,
  );
  return [...new Set(names ?? [])].map((path) => path.split('/')[1] ?? '').sort();
}

describe('packages a command loads', () => {
  it('validate loads none of bullmq, ioredis, piscina, pino-pretty and nodemailer; with threads, piscina', async () => {
    expect(await packagesLoaded('sample', sample, [])).toEqual([]);
    expect(await packagesLoaded('spread', spread, ['--threads', '0'])).toEqual([]);
    // The check can fail: threads asked for load piscina, through the same module.
    expect(await packagesLoaded('threads', spread, ['--threads', '1'])).toEqual(['piscina']);
  }, 60_000);
});
