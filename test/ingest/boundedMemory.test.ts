import { spawn } from 'node:child_process';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { createSpillDir, removeSpillDir, sweepStaleDirs, sweepStaleSpillDirs } from '../../src/ingest/spillDir.js';
import { LineRanges } from '../../src/ingest/groupLimit.js';
import { ORDER_SCHEMA } from '../../src/ingest/openOrderSource.js';
import { createUnitStore } from '../../src/ingest/unitStore.js';
import { resolveColumns } from '../../src/ingest/resolveColumns.js';
import type { OrderUnit } from '../../src/ingest/orderUnit.js';
import { HEADER, readAll, rejected, row, tempDir, valid } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

function bigOrderFile(lines: number): string {
  const out = [HEADER, row({ orderRef: 'SMALL-1' })];
  for (let i = 0; i < lines; i++) out.push(row({ orderRef: 'HUGE', productId: String(5001 + i) }));
  out.push(row({ orderRef: 'SMALL-2' }));
  return out.join('\n') + '\n';
}

/** A process that is certainly gone: one that ran and exited. */
function deadPid(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', '0']);
    child.on('exit', () => resolve(child.pid!));
  });
}

describe('memory bounded whatever the shape', () => {
  it('an order over the maximum of product lines is refused whole, its lines named, only its first row kept; in memory and spilled alike', async () => {
    const file = await tmp.file('huge.csv', bigOrderFile(1500));
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    for (const options of [{}, { spillThresholdBytes: 0, bucketBytes: 4096, tmpDir: spill }]) {
      const items = await readAll(file, options);
      expect(
        valid(items)
          .map((o) => o.orderRef)
          .sort(),
      ).toEqual(['SMALL-1', 'SMALL-2']);
      const [huge] = rejected(items);
      expect(huge!.orderRef).toBe('HUGE');
      expect(huge!.rows).toHaveLength(1);
      expect(huge!.lines).toEqual([3]);
      expect(huge!.errors.map((e) => e.code)).toEqual(['ORDER_TOO_MANY_LINES']);
      expect(huge!.errors[0]!.message).toContain(
        "orderRef 'HUGE' has 1500 product lines (lines 3-1502); at most 1000 are accepted",
      );
    }
    expect(await readdir(spill)).toEqual([]); // the private spill folder is gone after reading
    const raised = await readAll(file, { maxLinesPerOrder: 2000 });
    expect(rejected(raised)).toEqual([]);
    expect(valid(raised).find((o) => o.orderRef === 'HUGE')?.payload.products).toHaveLength(1500);
  });

  it('identical rows without orderRef over the maximum are refused together, their lines named, only the first row kept; fewer stay separate orders', async () => {
    // No orderRef column: each row is an order, keyed by its content; identical ones share one group.
    const header = HEADER.replace('orderRef,', '');
    const plain = (over: Record<string, string> = {}) => row({ ...over, orderRef: '' }).replace(/^,/, '');
    const lines = [header, plain({ productId: '5002' })];
    for (let i = 0; i < 1500; i++) lines.push(plain());
    lines.push(plain({ productId: '5003' }), plain({ productId: '5003' }));
    const file = await tmp.file('copies.csv', lines.join('\n') + '\n');
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    for (const options of [{}, { spillThresholdBytes: 0, bucketBytes: 4096, tmpDir: spill }]) {
      const items = await readAll(file, options);
      expect(valid(items).map((o) => o.lines[0])).toEqual([2, 1503, 1504]);
      expect(new Set(valid(items).map((o) => o.key)).size).toBe(3); // the two 5003 copies: occurrences 1 and 2
      const [copies, ...others] = rejected(items);
      expect(others).toEqual([]);
      expect(copies!.rows).toHaveLength(1);
      expect(copies!.lines).toEqual([3]);
      expect(copies!.errors.map((e) => e.code)).toEqual(['IDENTICAL_ORDERS_TOO_MANY']);
      expect(copies!.errors[0]!.message).toContain(
        'repeated over 1500 product lines (lines 3-1502); at most 1000 are accepted',
      );
    }
    expect(await readdir(spill)).toEqual([]);
    const raised = await readAll(file, { maxLinesPerOrder: 2000 });
    expect(rejected(raised)).toEqual([]);
    expect(valid(raised)).toHaveLength(1503);
  });

  it('a spill bucket never holds an oversized group: 20,000 copies of one row come back as one unit', async () => {
    const header = HEADER.replace('orderRef,', '').split(',');
    const plan = resolveColumns('copies.csv', header);
    const values = row({ orderRef: '' }).split(',').slice(1);
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    const store = await createUnitStore<OrderUnit>({
      codec: ORDER_SCHEMA.codec(plan),
      bucketCount: 4,
      tmpDir: spill,
      limit: ORDER_SCHEMA.limit!(1000),
    });
    try {
      for (let line = 2; line < 20_002; line++)
        await store.add(ORDER_SCHEMA.csvUnit({ kind: 'record', line, values }, plan, {}));
      const sizes: number[] = [];
      for await (const bucket of store.buckets()) sizes.push(bucket.length);
      expect(sizes).toEqual([1]);
    } finally {
      await store.dispose();
    }
  });

  it('a store with more buckets than files it may keep open opens and closes the others on each write, and gives every unit back', async () => {
    const plan = resolveColumns('many.csv', HEADER.split(','));
    const spill = join(tmp.dir, 'spill');
    await mkdir(spill);
    const store = await createUnitStore<OrderUnit>({
      codec: ORDER_SCHEMA.codec(plan),
      bucketCount: 600,
      tmpDir: spill,
      flushBytes: 512,
      limit: ORDER_SCHEMA.limit!(1000),
      maxOpenFiles: 100,
    });
    const openFiles = async () => (await readdir('/proc/self/fd')).length;
    const before = await openFiles();
    try {
      for (let line = 2; line < 3002; line++)
        await store.add(
          ORDER_SCHEMA.csvUnit({ kind: 'record', line, values: row({ orderRef: `R-${line}` }).split(',') }, plan, {}),
        );
      const open = (await openFiles()) - before;
      expect(open).toBeGreaterThan(50); // the first 100 buckets keep theirs once written (most are by now)...
      expect(open).toBeLessThan(100 + 10); // ...and the other 500 do not: not one descriptor per bucket
      const lines: number[] = [];
      for await (const bucket of store.buckets()) lines.push(...bucket.map((unit) => unit.rows[0]!.line));
      expect(lines.sort((a, b) => a - b)).toEqual(Array.from({ length: 3000 }, (_, i) => i + 2));
    } finally {
      await store.dispose();
    }
    expect(await readdir(spill)).toEqual([]);
  });

  it('names lines as ranges, capped', () => {
    const ranges = new LineRanges();
    for (const line of [2, 3, 4, 7, 9, 10]) ranges.add(line);
    expect(ranges.toString()).toBe('2-4, 7, 9-10');
    const many = new LineRanges();
    for (let line = 1; line <= 100; line += 2) many.add(line);
    expect(many.toString()).toMatch(/^1, 3, .*, 39 and 30 more lines$/);
  });

  it('spill folders are private (0700), carry their pid, and stale ones of dead processes are swept at the next start', async () => {
    const dir = createSpillDir(tmp.dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(dir).toContain(`bulkorder-ingest-${process.pid}-`);
    const dead = join(tmp.dir, `bulkorder-ingest-${await deadPid()}-abcdef`);
    const alive = join(tmp.dir, `bulkorder-ingest-${process.ppid}-abcdef`);
    await mkdir(dead);
    await mkdir(alive);
    expect(sweepStaleSpillDirs(tmp.dir)).toEqual([dead]);
    expect((await readdir(tmp.dir)).sort()).toEqual([alive, dir].map((p) => p.slice(tmp.dir.length + 1)).sort());
    removeSpillDir(dir);
  });

  it("the same sweep for another prefix (a test's redis-server folders): a dead owner's folder goes, a live one's stays", async () => {
    const dead = join(tmp.dir, `bulkorder-redis-${await deadPid()}-abcdef`);
    const alive = join(tmp.dir, `bulkorder-redis-${process.ppid}-abcdef`);
    const spill = join(tmp.dir, `bulkorder-ingest-${await deadPid()}-abcdef`);
    for (const dir of [dead, alive, spill]) await mkdir(dir);
    expect(sweepStaleDirs(tmp.dir, 'bulkorder-redis-')).toEqual([dead]);
    expect((await readdir(tmp.dir)).sort()).toEqual([alive, spill].map((p) => p.slice(tmp.dir.length + 1)).sort());
  });

  it(
    'a process stopped by SIGTERM or SIGINT removes its spill folder; one killed outright leaves it to the next start',
    { timeout: 90_000 },
    async () => {
      const file = await tmp.file('orders.csv', bigOrderFile(50));
      const spill = join(tmp.dir, 'spill');
      await mkdir(spill);
      const script = await tmp.file(
        'hold.mts',
        `import { openOrderSource } from ${JSON.stringify(join(projectRoot, 'src/ingest/openOrderSource.ts'))};\n` +
          `const source = await openOrderSource(${JSON.stringify(file)}, { spillThresholdBytes: 0, streamWindowRows: 0, bucketBytes: 1024, tmpDir: ${JSON.stringify(spill)} });\n` +
          `const items = source.items()[Symbol.asyncIterator]();\n` +
          `await items.next();\n` +
          `process.stdout.write('ready\\n');\n` +
          `setInterval(() => undefined, 1000);\n`,
      );
      const run = (signal: NodeJS.Signals) =>
        new Promise<{ left: string[]; code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', script], {
            cwd: projectRoot,
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let left: string[] = [];
          child.stdout.on('data', (chunk: Buffer) => {
            if (!chunk.toString().includes('ready')) return;
            void readdir(spill).then((names) => {
              left = names;
              child.kill(signal);
            }, reject);
          });
          child.on('exit', (code, sig) => resolve({ left, code, signal: sig }));
        });
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        const { left, code } = await run(signal);
        expect(left, signal).toHaveLength(1); // it was spilling
        expect(code, signal).toBe(signal === 'SIGTERM' ? 143 : 130);
        expect(await readdir(spill), signal).toEqual([]);
      }
      const killed = await run('SIGKILL');
      expect(killed.signal).toBe('SIGKILL');
      expect(await readdir(spill)).toEqual(killed.left); // a crash leaves it...
      await readAll(file, { spillThresholdBytes: 0, tmpDir: spill });
      expect(await readdir(spill)).toEqual([]); // ...and the next start sweeps it
    },
  );
});
