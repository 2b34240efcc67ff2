/**
 * Redis commands per delivered order, and who issues them: one delivery run (import, one
 * `bulkorder worker`, the simulator at 20 ms) per BULKORDER_ORDERS_PER_JOB value (default 1 and 25:
 * one BullMQ job per order, the shape before issue 16's chunk jobs, and the default), with INFO commandstats
 * per command and MONITOR charging each command to its caller (a BullMQ script, a ledger or breaker
 * script, or a plain command) and key shape. Counts only: MONITOR slows Redis, so rates here mean nothing.
 *
 *   node dist/bench/commandBreakdown.js [orders=2000] [concurrency=50] [ordersPerJob=1,25]
 */
import { startBenchRedis } from './lib/benchRedis.js';
import { orderFile } from './lib/benchData.js';
import { oursLabel } from './lib/benchStats.js';
import { productRun, startSimulatorProcess, type DeliveryRun } from './deliveryBench.js';
import { ORDERS_PER_JOB } from './importBench.js';

const orders = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 50);
const ordersPerJob = process.argv[4]?.split(',').map(Number) ?? ORDERS_PER_JOB;

function describe(run: DeliveryRun): string[] {
  const per = (n: number): string => (n / run.orders).toFixed(2);
  return [
    `${oursLabel(run.ordersPerJob ?? 0)}: ${run.orders} orders delivered (${run.notDelivered} not), c=${concurrency}: ${run.totalCommandsPerOrder?.toFixed(2)} commands per order`,
    '',
    'per command (INFO commandstats, commands inside scripts included):',
    ...Object.entries(run.calls ?? {})
      .sort((a, b) => b[1] - a[1])
      .filter(([, n]) => n / run.orders >= 0.005)
      .map(([name, n]) => `  ${per(n).padStart(6)}  ${name}`),
    '',
    'per caller > command key (MONITOR):',
    ...(run.callers ?? [])
      .filter(([, n]) => n / run.orders >= 0.005)
      .map(([row, n]) => `  ${per(n).padStart(6)}  ${row}`),
  ];
}

const file = await orderFile(Math.round(orders * 1.4));
const redis = await startBenchRedis();
const sim = await startSimulatorProcess();
try {
  const runs: DeliveryRun[] = [];
  for (const n of ordersPerJob)
    runs.push(await productRun(redis, sim, file, { concurrency, processes: 1, ordersPerJob: n, breakdown: true }));
  const summary = `commands per delivered order: ${runs.map((r) => `${oursLabel(r.ordersPerJob ?? 0)} ${r.totalCommandsPerOrder?.toFixed(2)}`).join('; ')}`;
  process.stdout.write([...runs.map((r) => describe(r).join('\n')), summary].join('\n\n') + '\n');
} finally {
  sim.process.child.kill('SIGTERM');
  await sim.process.done;
  await redis.stop();
}
