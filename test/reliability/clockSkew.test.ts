import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { importAndFollow } from '../../src/importer/importAndFollow.js';
import { readBreakerStatus } from '../../src/worker/circuitBreaker.js';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { skewed, skewOf } from '../helpers/fakeTime.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { startTcpGate, type TcpGate } from '../helpers/tcpGate.js';

let rig: DeliveryRig | undefined;
let gate: TcpGate | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close();
  await gate?.close();
  if (rig !== undefined) await rm(rig.dir, { recursive: true, force: true });
  rig = undefined;
  gate = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;
/** The API refuses connections this long: the breaker opens, its trials fail, then one heals it. */
const OUTAGE_MS = 40_000;
/** A bound for a hang on a busy machine, not a speed. */
const MAX_WAIT_S = 150;
const ORDERS = 300;

describe('one clock: workers whose host clocks are 10 minutes apart (libfaketime)', () => {
  it(
    'a worker 10 min behind and one 10 min ahead beside a true one, through an outage and token expiries: every order delivered once, the breaker healed, no false possible duplicate',
    async () => {
      const behind = skewed('-10m');
      const ahead = skewed('+10m');
      // The test fails rather than passes vacuously when the preload does nothing.
      expect(skewOf(behind)).toBeLessThan(-9 * 60_000);
      expect(skewOf(ahead)).toBeGreaterThan(9 * 60_000);

      gate = await startTcpGate();
      // Tokens of 20 s: each expires many times over the run, and the shared one is written by skewed hosts.
      rig = await deliveryRig(
        'clockskew',
        { tokenLifetimeSeconds: 20, faults: { latencyMs: 20 } },
        { BULKORDER_BASE_URL: gate.url, BULKORDER_BREAKER_OPEN_MS: '5000', BULKORDER_BREAKER_MAX_OPEN_MS: '10000' },
      );
      gate.setTarget(rig.simulator.url);
      await gate.down();
      const workerEnv = { ...rig.env, BULKORDER_CONCURRENCY: '4', LOG_LEVEL: 'warn' };
      const workers: CliProcess[] = [
        startCli(['worker'], workerEnv),
        startCli(['worker'], { ...workerEnv, ...behind }),
        startCli(['worker'], { ...workerEnv, ...ahead }),
      ];
      const file = await rig.writeFile('skew.csv', ordersCsv('SKEW', ORDERS));
      const run = importAndFollow(
        file,
        { force: false },
        { services: rig.services, logger: rig.logger },
        {
          wait: true,
          timeoutMs: (OUTAGE_MS / 1000 + MAX_WAIT_S) * 1000,
          out: quiet,
        },
      );
      // The outage opens the breaker (the API refuses every connection) before it heals.
      await waitFor(
        async () => (await readBreakerStatus(rig!.services.redis, rig!.services.keys, 60_000)).state !== 'closed',
        'the breaker to open during the outage',
        120_000,
      );
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      await gate.up();
      const outcome = await run;
      if (outcome.batch?.delivered !== ORDERS) {
        // What was left, for the failure message: the breaker, the queue, the workers' last words.
        const q = rig.services.queue;
        const delayed = await q.getDelayed();
        console.error(
          JSON.stringify({
            breaker: await rig.services.redis.hgetall(rig.services.keys.breaker),
            counts: await q.getJobCounts(),
            paused: await q.isPaused(),
            redisNow: await rig.services.redis.time(),
            delayed: delayed.map((j) => ({ id: j.id, ts: j.timestamp, delay: j.delay, attempts: j.attemptsMade })),
            workers: workers.map((w) => w.output().slice(-3000)),
          }),
        );
      }

      const counters = rig.simulator.counters();
      expect(outcome.batch).toMatchObject({ delivered: ORDERS, dead: 0, held: 0, possibleDuplicates: 0 });
      expect(outcome.exitCode).toBe(0);
      expect(counters.ordersAccepted).toBe(ORDERS);
      expect(counters.duplicateOrdersAccepted).toBe(0);
      expect((await readBreakerStatus(rig.services.redis, rig.services.keys, 60_000)).state).toBe('closed');
      expect(await rig.services.queue.isPaused()).toBe(false);
      // All three took part: none was judged dead by its peers' clocks, and each held its heartbeat.
      const live = await rig.services.redis.zcard(rig.services.keys.workers);
      expect(live).toBe(3);
      for (const worker of workers) expect(worker.child.exitCode).toBeNull();
      recordReliability({
        fault: 'three workers: one 10 min behind, one 10 min ahead (libfaketime), a 40 s outage, 20 s tokens',
        behaviour:
          'every shared time is Redis’s: the breaker opened and healed for all, tokens shared across skewed hosts, no false possible duplicate',
        orders: ORDERS,
        lost: ORDERS - outcome.batch!.delivered - outcome.batch!.dead - outcome.batch!.held,
        duplicates: counters.duplicateOrdersAccepted,
        held: outcome.batch!.held,
      });
    },
    (OUTAGE_MS / 1000 + MAX_WAIT_S + 150) * 1000,
  );
});
