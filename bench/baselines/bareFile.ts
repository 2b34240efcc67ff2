/**
 * Baseline of benchmark #17: the script a user would write instead of bulkorder for one file.
 * csv-parse + the row schema (bareRows.ts), rows grouped by orderRef in memory, then the bare
 * posting loop (barePost.ts) at the same concurrency to the same API. No Redis, no queue, no
 * ledger, no results file: fast, and with none of the guarantees. Timed from outside, whole
 * process, like `bulkorder import --wait`.
 *
 *   node dist/bench/baselines/bareFile.js <simulatorUrl> <file.csv> <concurrency>   prints {"orders":..,"failed":..}
 */
import { barePayload, bareRows } from './bareRows.js';
import { postAll } from './barePost.js';

const [url, file, concurrencyArg] = process.argv.slice(2);
if (url === undefined || file === undefined) throw new Error('usage: bareFile <url> <file.csv> <concurrency>');

const orders = new Map<string, ReturnType<typeof barePayload>>();
for await (const { checked } of bareRows(file)) {
  const v = checked.value;
  if (v === undefined) continue;
  const ref = `${v.businessCustomerId}/${checked.identity.orderRef ?? checked.line}`;
  const order = orders.get(ref);
  if (order === undefined) orders.set(ref, barePayload(v));
  else order.products.push({ productId: v.productId, quantity: v.quantity });
}
const figures = await postAll(
  url,
  [...orders.values()].map((order) => JSON.stringify(order)),
  Number(concurrencyArg ?? 100),
);
process.stdout.write(
  JSON.stringify({ orders: figures.orders, failed: figures.failed, statuses: figures.statuses }) + '\n',
);
