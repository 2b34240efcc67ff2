/** Medians, the machine's description and number formatting shared by the benchmarks. */
import { cpus, loadavg, totalmem } from 'node:os';

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The 1-minute load average now, so each figure carries the noise it was measured in. */
export function load(): number {
  return Number(loadavg()[0]!.toFixed(2));
}

export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${process.platform}`;
}

export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
export const rate = (n: number): string => Math.round(n).toLocaleString('en-US');

/** How a product run is named by its BULKORDER_ORDERS_PER_JOB: one order per job is the shape before issue 16's chunk jobs (since issue 32 a chunk of one). */
export const oursLabel = (ordersPerJob: number): string =>
  ordersPerJob === 1 ? 'ours, 1 order per job (before)' : `ours, ${ordersPerJob} orders per job`;
