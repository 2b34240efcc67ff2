/**
 * CI smoke test of the benchmarks (`bench/run.ts --quick`): every script runs end to end at
 * small sizes and reports a figure. It asserts that they work, never how fast anything is:
 * timings belong in BENCHMARKS.md, not in tests.
 */
import { describe, expect, it } from 'vitest';
import { QUICK, runBenchmarks } from '../../bench/run.js';

describe('benchmarks (--quick)', () => {
  it('runs every benchmark and reports every row of the table', { timeout: 300_000 }, async () => {
    const lines: string[] = [];
    const report = await runBenchmarks({ ...QUICK, only: new Set(), log: (line) => lines.push(line) });
    const [run] = report.runs;
    expect(run?.validate?.ours.rowsPerSecond).toBeGreaterThan(0);
    expect(run?.validate?.bare.rowsPerSecond).toBeGreaterThan(0);
    expect(run?.validate?.bareRows.rowsPerSecond).toBeGreaterThan(0);
    expect(run?.validate?.shapes.map((shape) => shape.shape)).toEqual(['grouped', 'shuffled']);
    expect(run?.validate?.sameOrders).toBe(true); // the shuffled copy: the same orders and rejects
    expect(run?.validateSmall?.ours.peakRssBytes).toBeGreaterThan(0);
    expect(run?.import?.ours.orders).toBeGreaterThan(0);
    expect(run?.import?.bare.orders).toBeGreaterThan(0);
    expect(run?.import?.ours.ledgerEntryBytes).toBeGreaterThan(0);
    expect(run?.delivery?.pairs).toHaveLength(QUICK.concurrencies.length);
    for (const pair of run?.delivery?.pairs ?? []) {
      expect(pair.ours.orders).toBe(pair.bare.orders); // the same bodies on both sides
      expect(pair.ours.tokenRequests).toBeGreaterThan(0);
      expect([pair.ours.notDelivered, pair.ours.logs]).toEqual([0, undefined]);
      expect([pair.bare.notDelivered, pair.bare.logs]).toEqual([0, undefined]);
    }
    expect(run?.delivery?.scaling.map((r) => r.processes)).toEqual(QUICK.processes);
    for (const pair of run?.delivery?.pairs ?? []) {
      expect(pair.ours.cpuPer1000?.total).toBeGreaterThan(0);
      expect(pair.bare.cpuPer1000?.total).toBeGreaterThan(0);
      expect(pair.ours.totalCommandsPerOrder).toBeGreaterThan(0);
    }
    expect(run?.delivery?.cluster?.notDelivered).toBe(0);
    expect(run?.delivery?.cluster?.orders).toBeGreaterThan(0);
    // The same orders on both sides of the end-to-end file, every one accepted once (fileBench throws otherwise).
    expect(run?.file?.ours.orders).toBeGreaterThan(0);
    expect(run?.file?.ours.orders).toBe(run?.file?.bare.orders);
    expect(run?.simulatorAlone?.requestsPerSecond).toBeGreaterThan(0);
    expect(run?.simulatorAlone?.requestsPerCpuSecond).toBeGreaterThan(0);
    for (const row of [1, 2, 3, 4, 5, 6, 7, 8, 16, 17]) expect(report.table).toContain(`| ${row} |`);
    expect(lines.length).toBeGreaterThan(0);
  });
});
