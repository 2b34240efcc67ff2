/**
 * The simulator in a process of its own for the delivery benchmarks (so its CPU is not the
 * measured worker's), keeping counters only (`retainOrders: false`).
 *
 *   node dist/bench/simulatorServer.js <latencyMs> <tokenLifetimeSeconds>     prints {"url": ...}
 *
 * Runs until SIGTERM.
 */
import { startSimulator } from '../src/simulator/index.js';

const latencyMs = Number(process.argv[2] ?? 20);
const tokenLifetimeSeconds = Number(process.argv[3] ?? 3600);
const simulator = await startSimulator({ retainOrders: false, tokenLifetimeSeconds, faults: { latencyMs } });
process.once('SIGTERM', () => void simulator.close().then(() => process.exit(0)));
process.stdout.write(JSON.stringify({ url: simulator.url }) + '\n');
