import { appendFileSync } from 'node:fs';

/** One row of RELIABILITY.md: a fault, what the product did, and the counts a run measured. */
export interface ReliabilityRow {
  fault: string;
  behaviour: string;
  orders: number;
  lost: number;
  duplicates: number;
  held: number;
}

/**
 * Records a measured row when RELIABILITY_OUT names a file (`npm run reliability` sets it and
 * renders RELIABILITY.md from the rows); a no-op otherwise. `lost` is counted, never assumed:
 * orders that ended neither delivered, dead-lettered nor held.
 */
export function recordReliability(row: ReliabilityRow): void {
  const out = process.env.RELIABILITY_OUT;
  if (out) appendFileSync(out, JSON.stringify(row) + '\n');
}
