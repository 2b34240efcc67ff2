/**
 * Baseline of benchmark #4: a bare undici loop (barePost.ts) posting the same order bodies to the
 * same simulator at the same concurrency. No Redis, no queue, no ledger: the most one process can
 * get from the API.
 *
 *   node dist/bench/baselines/bareDelivery.js <simulatorUrl> <file.csv> <concurrency>
 *   prints {"orders":..,"seconds":..,"failed":..,"statuses":{..},"reauthorized":..}; bodies are read before the clock starts.
 */
import { openOrderSource } from '../../src/ingest/openOrderSource.js';
import { postAll } from './barePost.js';

const [url, file, concurrencyArg] = process.argv.slice(2);
if (url === undefined || file === undefined) throw new Error('usage: bareDelivery <url> <file.csv> <concurrency>');
const concurrency = Number(concurrencyArg ?? 50);

const bodies: string[] = [];
const source = await openOrderSource(file);
for await (const item of source.items()) if (item.kind === 'valid') bodies.push(JSON.stringify(item.payload));

const started = performance.now();
const cpuBefore = process.cpuUsage();
const { orders, failed, statuses, reauthorized } = await postAll(url, bodies, concurrency);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
// CPU of the posting loop only (not the file read before it): what the loop costs per order.
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
process.stdout.write(JSON.stringify({ orders, seconds, cpuSeconds, failed, statuses, reauthorized }) + '\n');
