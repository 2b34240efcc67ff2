import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateOrders, orderRows } from '../../bench/generateOrders.js';
import { readAll, rejected, tempDir, valid } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('bench/generateOrders', () => {
  it('writes exactly the rows asked for, the same for the same seed', async () => {
    const a = join(tmp.dir, 'a.csv');
    const b = join(tmp.dir, 'b.csv');
    const c = join(tmp.dir, 'c.csv');
    const result = await generateOrders(a, { rows: 3000, seed: 7 });
    await generateOrders(b, { rows: 3000, seed: 7 });
    await generateOrders(c, { rows: 3000, seed: 8 });
    expect(result.rows).toBe(3000);
    expect((await readFile(a, 'utf8')).trimEnd().split('\n')).toHaveLength(3001);
    expect(await readFile(a, 'utf8')).toBe(await readFile(b, 'utf8'));
    expect(await readFile(a, 'utf8')).not.toBe(await readFile(c, 'utf8'));
    for (const rows of [0, 1, 2, 5, 17])
      expect([...orderRows({ rows, seed: 3, multiLineShare: 0.9, spread: 3 })], String(rows)).toHaveLength(rows);
  });

  it('produces valid orders, some with product lines that are not adjacent', async () => {
    const file = join(tmp.dir, 'orders.csv');
    const { orders } = await generateOrders(file, { rows: 2000, seed: 1, multiLineShare: 0.3, spread: 200 });
    const items = await readAll(file);
    expect(rejected(items)).toEqual([]);
    expect(items).toHaveLength(orders);
    const multi = valid(items).filter((o) => o.lines.length > 1);
    expect(multi.length).toBeGreaterThan(100);
    expect(multi.some((o) => o.lines.some((line, i) => i > 0 && line - o.lines[i - 1]! > 1))).toBe(true);
  });

  it('adds typical mistakes when asked', async () => {
    const file = join(tmp.dir, 'mistakes.csv');
    await generateOrders(file, { rows: 1000, seed: 2, errorShare: 0.1 });
    const bad = rejected(await readAll(file));
    expect(bad.length).toBeGreaterThan(30);
    expect(new Set(bad.flatMap((o) => o.errors.map((e) => e.code)))).toContain('INTEGER_INVALID');
  });
});
