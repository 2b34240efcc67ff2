/**
 * Baseline of benchmark #2: csv-parse + the row schema + BullMQ `addBulk` in chunks of 500
 * (the importer's chunk size), one job per valid row carrying its payload and cells. No ledger,
 * no grouping, no batch record: the least any importer onto BullMQ must do.
 *
 *   node dist/bench/baselines/bareImport.js <file.csv> <redisUrl> <prefix>    prints {"rows":..,"jobs":..}
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { barePayload, bareRows } from './bareRows.js';

const [file, redisUrl, prefix] = process.argv.slice(2);
if (file === undefined || redisUrl === undefined || prefix === undefined)
  throw new Error('usage: bareImport <file.csv> <redisUrl> <prefix>');
const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
const queue = new Queue('bare-orders', { connection, prefix });
const options = {
  attempts: 15,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: true,
  removeOnFail: true,
};
let rows = 0;
let jobs = 0;
let chunk: { name: string; data: unknown; opts: typeof options }[] = [];
for await (const { checked, cells } of bareRows(file)) {
  rows++;
  const v = checked.value;
  if (v === undefined) continue;
  chunk.push({
    name: 'deliver-order',
    data: { line: checked.line, payload: barePayload(v), cells: [cells] },
    opts: options,
  });
  if (chunk.length >= 500) {
    await queue.addBulk(chunk);
    jobs += chunk.length;
    chunk = [];
  }
}
if (chunk.length > 0) await queue.addBulk(chunk);
jobs += chunk.length;
await queue.close();
connection.disconnect();
process.stdout.write(JSON.stringify({ rows, jobs }) + '\n');
