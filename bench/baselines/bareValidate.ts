/**
 * Baseline of benchmark #1: csv-parse + the row schema in a loop (bench/baselines/bareRows.ts).
 *
 *   node dist/bench/baselines/bareValidate.js <file.csv>      prints {"rows":..,"valid":..}
 */
import { bareRows } from './bareRows.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: bareValidate <file.csv>');
let rows = 0;
let valid = 0;
for await (const row of bareRows(file)) {
  rows++;
  if (row.checked.errors.length === 0) valid++;
}
process.stdout.write(JSON.stringify({ rows, valid }) + '\n');
