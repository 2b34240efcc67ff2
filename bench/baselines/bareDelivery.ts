/**
 * Baseline of benchmark #4: a bare undici loop posting the same order bodies to the same
 * simulator at the same concurrency: `concurrency` loops over one Pool of `concurrency`
 * connections, one token refreshed when 99% of its lifetime has passed (as the product does).
 * No Redis, no queue, no ledger: the most one process can get from the API.
 *
 *   node dist/bench/baselines/bareDelivery.js <simulatorUrl> <file.csv> <concurrency>
 *   prints {"orders":..,"seconds":..,"failed":..,"statuses":{..},"reauthorized":..}; bodies are read before the clock starts.
 */
import { Pool } from 'undici';
import { openOrderSource } from '../../src/ingest/openOrderSource.js';

const [url, file, concurrencyArg] = process.argv.slice(2);
if (url === undefined || file === undefined) throw new Error('usage: bareDelivery <url> <file.csv> <concurrency>');
const concurrency = Number(concurrencyArg ?? 50);

const bodies: string[] = [];
const source = await openOrderSource(file);
for await (const item of source.items()) if (item.kind === 'valid') bodies.push(JSON.stringify(item.payload));

const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
let token: { value: string; refreshAt: number } | undefined;
let fetching: Promise<string> | undefined;
async function fetchToken(): Promise<string> {
  const answer = await pool.request({
    path: '/oauth2/token',
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'sim-business', client_secret: 'sim-business-secret' }).toString(),
  });
  const { access_token: value, expires_in: lifetime } = (await answer.body.json()) as { access_token: string; expires_in: number };
  token = { value, refreshAt: Date.now() + lifetime * 990 };
  return value;
}
function currentToken(): string | Promise<string> {
  if (token !== undefined && Date.now() < token.refreshAt) return token.value;
  fetching ??= fetchToken().finally(() => (fetching = undefined));
  return fetching;
}

let next = 0;
let failed = 0;
let reauthorized = 0;
const statuses: Record<number, number> = {};
async function post(body: string): Promise<number> {
  const bearer = await currentToken();
  const answer = await pool.request({
    path: '/business-api/orders',
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'user-agent': 'Bench-BulkorderBench', 'content-type': 'application/json' },
    body,
  });
  await answer.body.json();
  // A token can expire in flight (5 s lifetimes): drop it and fetch again, as the product does.
  if (answer.statusCode === 401 && token?.value === bearer) token = undefined;
  return answer.statusCode;
}
const started = performance.now();
const cpuBefore = process.cpuUsage();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      let status = await post(body);
      if (status === 401) {
        reauthorized++;
        status = await post(body);
      }
      if (status !== 201) {
        failed++;
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
// CPU of the posting loop only (not the file read before it): what the loop costs per order.
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
await pool.close();
process.stdout.write(JSON.stringify({ orders: bodies.length, seconds, cpuSeconds, failed, statuses, reauthorized }) + '\n');
