/**
 * Redis commands per delivered order, and who issues them: one delivery run (import, one
 * `bulkorder worker`, the simulator at 20 ms) with INFO commandstats per command and MONITOR
 * charging each command to its caller (a BullMQ script, a ledger or breaker script, or a plain
 * command) and key shape. Counts only: MONITOR slows Redis, so rates here mean nothing.
 *
 *   node dist/bench/commandBreakdown.js [orders=2000] [concurrency=50]
 */
import { startBenchRedis } from './lib/benchRedis.js';
import { orderFile } from './lib/benchData.js';
import { productRun, startSimulatorProcess } from './deliveryBench.js';

const orders = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 50);
const file = await orderFile(Math.round(orders * 1.4));
const redis = await startBenchRedis();
const sim = await startSimulatorProcess();
try {
  const run = await productRun(redis, sim, file, concurrency, 1, true);
  const per = (n: number): string => (n / run.orders).toFixed(2);
  const lines = [
    `${run.orders} orders delivered (${run.notDelivered} not), c=${concurrency}: ${run.totalCommandsPerOrder?.toFixed(2)} commands per order`,
    '',
    'per command (INFO commandstats, commands inside scripts included):',
    ...Object.entries(run.calls ?? {})
      .sort((a, b) => b[1] - a[1])
      .filter(([, n]) => n / run.orders >= 0.005)
      .map(([name, n]) => `  ${per(n).padStart(6)}  ${name}`),
    '',
    'per caller > command key (MONITOR):',
    ...(run.callers ?? []).filter(([, n]) => n / run.orders >= 0.005).map(([row, n]) => `  ${per(n).padStart(6)}  ${row}`),
  ];
  process.stdout.write(lines.join('\n') + '\n');
} finally {
  sim.process.child.kill('SIGTERM');
  await sim.process.done;
  await redis.stop();
}
