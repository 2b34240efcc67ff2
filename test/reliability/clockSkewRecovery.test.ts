import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { bullmq } from '../../src/cjsPackages.js';
import { redisTime } from '../../src/redis/redisClock.js';
import type { ScheduledImportResult } from '../../src/schedule/runScheduledImport.js';
import { SCHEDULES_QUEUE, type ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { skewed, skewOf } from '../helpers/fakeTime.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

/**
 * Issue 37, "one clock", the decisions clockSkew.test.ts leaves out: a claim left `sending` by
 * a SIGKILLed worker, recovered by peers 10 minutes behind and ahead, a schedule fired by
 * workers whose clocks are 20 minutes apart, and the time an importer 10 minutes behind or ahead
 * stamps on its jobs. Real worker and importer processes (the CLI) under libfaketime, real Redis
 * and BullMQ, the simulator's counts.
 */
let rig: DeliveryRig | undefined;
let front: HoldingFront | undefined;
afterEach(async () => {
  await killAllCli();
  await front?.close();
  await rig?.close();
  rig = undefined;
  front = undefined;
});

const quiet = { isTTY: false, write: () => true } as unknown as NodeJS.WriteStream;

/** The User-Agent of the worker whose requests the front holds. */
const VICTIM_AGENT = 'Test-BulkorderVictim';

/**
 * A front for the simulator that every worker calls (one base URL: one target, one keyspace). It
 * passes every request on, except the victim's orders (by User-Agent): it reads them and never
 * answers nor passes them on, so the victim holds its claims `sending` for as long as it lives and
 * nothing it sent is stored.
 */
interface HoldingFront {
  url: string;
  setTarget(url: string): void;
  /** Requests it holds now. */
  held(): number;
  close(): Promise<void>;
}

async function startHoldingFront(): Promise<HoldingFront> {
  let target = new URL('http://127.0.0.1:1');
  const holding = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.headers['user-agent'] === VICTIM_AGENT && req.url?.startsWith('/oauth2/') !== true) {
      req.resume();
      holding.add(res);
      res.on('close', () => holding.delete(res));
      return;
    }
    const upstream = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setTarget: (url) => (target = new URL(url)),
    held: () => holding.size,
    async close() {
      for (const res of holding) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A bound for a hang on a busy machine, not a speed. */
const MAX_WAIT_MS = 240_000;

describe('one clock: recovery and schedules on workers whose host clocks are 10 minutes apart (libfaketime)', () => {
  it(
    'a SIGKILLed worker’s claims, left `sending`, are recovered by workers 10 min behind and 10 min ahead: never taken while it lives, every order stored once, none left sending, no false possible duplicate',
    async () => {
      const behind = skewed('-10m');
      const ahead = skewed('+10m');
      // The test fails rather than passes vacuously when the preload does nothing.
      expect(skewOf(behind)).toBeLessThan(-9 * 60_000);
      expect(skewOf(ahead)).toBeGreaterThan(9 * 60_000);

      const ORDERS = 100;
      const PER_JOB = 5;
      // The victim's slots: it takes this many chunk jobs, claims one wave and waits on it for ever.
      const VICTIM_CONCURRENCY = 5;
      front = await startHoldingFront();
      rig = await deliveryRig(
        'skewclaims',
        {},
        {
          BULKORDER_BASE_URL: front.url,
          // At-least-once for an order sent without an answer: a claim found `sending` is sent again,
          // so every order reaches the API exactly once when the dead worker's request stored nothing.
          BULKORDER_AMBIGUOUS: 'resend',
          BULKORDER_ORDERS_PER_JOB: String(PER_JOB),
          BULKORDER_STALLED_INTERVAL_MS: '1000',
        },
      );
      front.setTarget(rig.simulator.url);
      const { services } = rig;
      const workerEnv = { ...rig.env, LOG_LEVEL: 'warn' };
      // The victim's requests outlast its life (no timeout, no resend while it lives); its job lock
      // (the deadline + 5 s) expires that long after the SIGKILL.
      const victim = startCli(['worker'], {
        ...workerEnv,
        BULKORDER_USER_AGENT: VICTIM_AGENT,
        BULKORDER_CONCURRENCY: String(VICTIM_CONCURRENCY),
        BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '45000',
        BULKORDER_HTTP_BODY_TIMEOUT_MS: '45000',
        BULKORDER_HTTP_DEADLINE_MS: '45000',
      });
      await waitFor(
        async () => (await services.redis.zcard(services.keys.workers)) === 1,
        'the victim to beat',
        MAX_WAIT_MS,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}: ${victim.output().slice(-3000)}`);
      });
      const file = await rig.writeFile('claims.csv', ordersCsv('CLAIM', ORDERS));
      const { batchId } = await rig.importFile(file);
      // The victim alone: it takes its jobs and claims its first wave, which the API holds.
      await waitFor(
        async () => (await services.queue.getActiveCount()) === VICTIM_CONCURRENCY && front!.held() === PER_JOB,
        'the victim to hold its jobs and claims',
      );
      const claimed = await services.redis.zrange(services.keys.sending, '0', '-1');
      expect(claimed).toHaveLength(PER_JOB);
      const tokensOf = async () =>
        Promise.all(claimed.map((key) => services.redis.hmget(services.keys.ledger(key), 's', 't')));
      const claimsAtStart = await tokensOf();
      expect(claimsAtStart.every(([state]) => state === 'sending')).toBe(true);
      const victimOrders = VICTIM_CONCURRENCY * PER_JOB;

      // The survivors: one 10 min behind, one 10 min ahead, at the real API.
      const survivors: CliProcess[] = [
        startCli(['worker'], { ...workerEnv, ...behind, BULKORDER_CONCURRENCY: '4' }),
        startCli(['worker'], { ...workerEnv, ...ahead, BULKORDER_CONCURRENCY: '4' }),
      ];
      await waitFor(
        () => rig!.simulator.counters().ordersAccepted === ORDERS - victimOrders,
        'the survivors to deliver every order the victim does not hold',
        MAX_WAIT_MS,
      );
      // Several of the survivors' stalled checks (every second) while the victim lives: a live
      // claim is not taken, whatever the checker's clock says.
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      expect(await tokensOf()).toEqual(claimsAtStart);
      expect(front.held()).toBe(PER_JOB);
      expect(rig.simulator.counters().ordersAccepted).toBe(ORDERS - victimOrders);
      expect(await services.queue.getActiveCount()).toBe(VICTIM_CONCURRENCY);

      victim.child.kill('SIGKILL');
      await victim.exited;
      const { batch, settled } = await followBatch(services.batches, batchId, {
        pollMs: 200,
        timeoutMs: MAX_WAIT_MS,
        out: quiet,
      });
      if (!settled) console.error(JSON.stringify({ batch, out: survivors.map((w) => w.output().slice(-3000)) }));
      const counters = rig.simulator.counters();
      expect(settled).toBe(true);
      expect(batch).toMatchObject({ delivered: ORDERS, dead: 0, held: 0, possibleDuplicates: 0 });
      expect(counters.ordersAccepted).toBe(ORDERS);
      expect(counters.duplicateOrdersAccepted).toBe(0);
      expect(await services.redis.zcard(services.keys.sending)).toBe(0);
      const states = await Promise.all(claimed.map((key) => services.redis.hget(services.keys.ledger(key), 's')));
      expect(states).toEqual(claimed.map(() => 'delivered'));
      // Both survivors took part and still run.
      for (const worker of survivors) expect(worker.child.exitCode).toBeNull();
      expect(await services.redis.zcard(services.keys.workers)).toBeGreaterThanOrEqual(2);
      recordReliability({
        fault: `a worker SIGKILLed holding ${victimOrders} orders (${PER_JOB} claims \`sending\`, the API holding their requests unstored); its peers 10 min behind and 10 min ahead (libfaketime); BULKORDER_AMBIGUOUS=resend`,
        behaviour:
          'the live claims were left alone by the skewed peers; after the kill its jobs came back on Redis’s clock (the lock’s TTL) and every order was stored once, none left `sending`',
        orders: ORDERS,
        lost: ORDERS - batch.delivered - batch.dead - batch.held,
        duplicates: counters.duplicateOrdersAccepted,
        held: batch.held,
      });
    },
    MAX_WAIT_MS * 2 + 60_000,
  );

  it(
    'a schedule every 5 s, set from a host 10 min ahead and run by workers 10 min behind, true and 10 min ahead: each slot fired once, none early, none missed',
    async () => {
      const behind = skewed('-10m');
      const ahead = skewed('+10m');
      expect(skewOf(behind)).toBeLessThan(-9 * 60_000);
      expect(skewOf(ahead)).toBeGreaterThan(9 * 60_000);

      const ORDERS = 20;
      const SLOT_MS = 5_000;
      const FIRINGS = 5;
      rig = await deliveryRig('skewschedule', {}, { BULKORDER_STALLED_INTERVAL_MS: '1000' });
      const { services } = rig;
      const workerEnv = { ...rig.env, LOG_LEVEL: 'warn', BULKORDER_CONCURRENCY: '4' };
      const workers: CliProcess[] = [
        startCli(['worker'], workerEnv),
        startCli(['worker'], { ...workerEnv, ...behind }),
        startCli(['worker'], { ...workerEnv, ...ahead }),
      ];
      await waitFor(
        async () => (await services.redis.zcard(services.keys.workers)) === 3,
        'three workers to beat',
        MAX_WAIT_MS,
      );
      const file = await rig.writeFile('nightly.csv', ordersCsv('NIGHT', ORDERS));
      const setFrom = await redisTime(services.redis);
      const set = startCli(['schedule', 'set', 'skew', '--cron', '*/5 * * * * *', '--source', file], {
        ...rig.env,
        ...ahead,
      });
      expect(await set.exited).toBe(0);
      const setUntil = await redisTime(services.redis);

      const queue = new (bullmq().Queue)<ScheduledImportData>(SCHEDULES_QUEUE, {
        connection: services.redis,
        prefix: rig.prefix,
      });
      try {
        // Every firing the schedule made so far, finished or not (BullMQ keeps the last 20 finished).
        const firings = () => queue.getJobs(['active', 'wait', 'completed', 'failed'], 0, -1);
        await waitFor(
          async () => (await queue.getJobs(['completed'], 0, -1)).length >= FIRINGS,
          `${FIRINGS} firings`,
          MAX_WAIT_MS,
        );
        await queue.removeJobScheduler('skew');
        // The last firing (if one began meanwhile) finishes; the next one was removed with the schedule.
        await waitFor(
          async () => (await queue.getActiveCount()) + (await queue.getWaitingCount()) === 0,
          'the firing in progress to end',
          MAX_WAIT_MS,
        );
        const done = await firings();
        const slots = done.map((job) => Number(String(job.id).split(':').pop())).sort((a, b) => a - b);
        const startedAt = new Map<number, number>();
        for (const job of done) {
          const result = job.returnvalue as ScheduledImportResult | null;
          const imported = result?.files[0];
          expect(imported !== undefined && 'batchId' in imported).toBe(true);
          if (imported === undefined || !('batchId' in imported)) continue;
          const batch = await services.batches.get(imported.batchId);
          startedAt.set(Number(String(job.id).split(':').pop()), batch?.startedAt ?? 0);
        }
        const report = { setFrom, setUntil, slots, startedAt: [...startedAt.entries()] };
        // Each slot once, in a row from the first after `schedule set` (Redis's time): none missed, none twice.
        expect(
          done.every((job) => job.finishedOn !== undefined && job.failedReason === undefined),
          JSON.stringify(report),
        ).toBe(true);
        expect(new Set(slots).size, JSON.stringify(report)).toBe(slots.length);
        expect(slots.length, JSON.stringify(report)).toBeGreaterThanOrEqual(FIRINGS);
        expect(slots[0]! % SLOT_MS, JSON.stringify(report)).toBe(0);
        expect(slots[0]!, JSON.stringify(report)).toBeGreaterThan(setFrom - SLOT_MS);
        expect(slots[0]!, JSON.stringify(report)).toBeLessThanOrEqual(setUntil + SLOT_MS);
        for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!, JSON.stringify(report)).toBe(SLOT_MS);
        // None early: each firing's batch began (Redis's clock) at or after its slot.
        for (const [slot, at] of startedAt) expect(at, JSON.stringify(report)).toBeGreaterThanOrEqual(slot);
        // One batch per firing, and the file's orders stored once between them.
        expect(await services.redis.zcard(services.keys.batchIndex)).toBe(slots.length);
        await waitFor(() => rig!.simulator.counters().ordersAccepted === ORDERS, 'the orders to arrive', MAX_WAIT_MS);
        const counters = rig.simulator.counters();
        expect(counters.duplicateOrdersAccepted).toBe(0);
        for (const worker of workers) expect(worker.child.exitCode).toBeNull();
        recordReliability({
          fault: `a schedule every 5 s, set from a host 10 min ahead, run by three workers: 10 min behind, true, 10 min ahead (libfaketime); ${slots.length} slots`,
          behaviour:
            'every slot fired once, none before its time and none skipped (BullMQ’s delayed jobs and next slots on Redis’s clock); the file’s orders stored once',
          orders: ORDERS,
          lost: ORDERS - counters.ordersAccepted,
          duplicates: counters.duplicateOrdersAccepted,
          held: 0,
        });
      } finally {
        await queue.close();
      }
    },
    MAX_WAIT_MS * 2 + 60_000,
  );

  it(
    'importers 10 min ahead and 10 min behind stamp their jobs on Redis’s clock: of a customer a close proved refused, the orders queued before the close are dead-lettered unsent, those queued after are delivered once',
    async () => {
      const behind = skewed('-10m');
      const ahead = skewed('+10m');
      expect(skewOf(behind)).toBeLessThan(-9 * 60_000);
      expect(skewOf(ahead)).toBeGreaterThan(9 * 60_000);

      const ORDERS = 10;
      rig = await deliveryRig('skewimport', {}, { BULKORDER_ORDERS_PER_JOB: '5' });
      const { services } = rig;
      // Nothing is taken until the worker has read the close (its breaker reads it every second).
      await services.queue.pause();
      const worker = startCli(['worker'], { ...rig.env, LOG_LEVEL: 'warn', BULKORDER_CONCURRENCY: '4' });
      await waitFor(
        async () => (await services.redis.zcard(services.keys.workers)) === 1,
        'the worker to beat',
        MAX_WAIT_MS,
      );
      // Every order is of customer 1001.
      const before = await importSkewed(rig, ahead, 'before.csv', ordersCsv('EARLY', ORDERS));
      // What closeBreaker-5.lua writes when a healthy trial of another customer proves 1001 refused.
      const closedAt = await redisTime(services.redis);
      const answer = { status: 422, code: 'CUSTOMER_BLOCKED', message: 'customer 1001 is blocked' };
      await services.redis
        .multi()
        .hset(services.keys.breakerRefused, '@closedAt', String(closedAt), '1001', JSON.stringify(answer))
        .pexpire(services.keys.breakerRefused, 600_000)
        .exec();
      const after = await importSkewed(rig, behind, 'after.csv', ordersCsv('LATE', ORDERS));
      // Each job stamped when it was queued on Redis's clock, not 10 minutes off.
      const report = JSON.stringify({ closedAt, before, after });
      for (const stamp of before.stamps) {
        expect(stamp, report).toBeGreaterThanOrEqual(before.from);
        expect(stamp, report).toBeLessThanOrEqual(Math.min(before.until, closedAt));
      }
      for (const stamp of after.stamps) {
        expect(stamp, report).toBeGreaterThan(closedAt);
        expect(stamp, report).toBeLessThanOrEqual(after.until);
      }
      // Several of the worker's breaker ticks (every second) read the close before a job is taken.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      await services.queue.resume();

      const ended = await Promise.all(
        [before.batchId, after.batchId].map((batchId) =>
          followBatch(services.batches, batchId, { pollMs: 200, timeoutMs: MAX_WAIT_MS, out: quiet }),
        ),
      );
      if (!ended.every((e) => e.settled)) console.error(JSON.stringify({ ended, out: worker.output().slice(-3000) }));
      expect(ended.map((e) => e.settled)).toEqual([true, true]);
      const [early, late] = ended.map((e) => e.batch);
      expect(early, report).toMatchObject({ delivered: 0, dead: ORDERS, held: 0 });
      expect(late, report).toMatchObject({ delivered: ORDERS, dead: 0, held: 0, possibleDuplicates: 0 });
      const counters = rig.simulator.counters();
      expect(counters.ordersAccepted).toBe(ORDERS);
      expect(counters.duplicateOrdersAccepted).toBe(0);
      expect(worker.child.exitCode).toBeNull();
      recordReliability({
        fault: `an importer 10 min ahead queued ${ORDERS} orders of a customer before a close proved it refused, one 10 min behind ${ORDERS} more after it (libfaketime)`,
        behaviour:
          'each job was stamped on Redis’s clock: the orders queued before the close were dead-lettered unsent with its answer, those queued after were delivered once',
        orders: 2 * ORDERS,
        lost: 2 * ORDERS - (late?.delivered ?? 0) - (early?.dead ?? 0),
        duplicates: counters.duplicateOrdersAccepted,
        held: (early?.held ?? 0) + (late?.held ?? 0),
      });
    },
    MAX_WAIT_MS * 2 + 60_000,
  );
});

/** Imports `csv` with the CLI under `clock`; its batch, its jobs' stamps and Redis's time around the import. */
async function importSkewed(
  r: DeliveryRig,
  clock: Record<string, string>,
  name: string,
  csv: string,
): Promise<{ batchId: string; stamps: number[]; from: number; until: number }> {
  const { services } = r;
  const file = await r.writeFile(name, csv);
  const from = await redisTime(services.redis);
  const run = startCli(['import', file, '--json'], { ...r.env, ...clock });
  const code = await run.exited;
  const until = await redisTime(services.redis);
  expect(code, run.output()).toBe(0);
  const { batchId } = JSON.parse(run.stdout()) as { batchId: string };
  const jobs = await services.queue.getJobs(['waiting'], 0, -1);
  const stamps = jobs.filter((job) => String(job.id).startsWith(`${batchId}.`)).map((job) => job.timestamp);
  expect(stamps.length).toBeGreaterThan(0);
  return { batchId, stamps, from, until };
}
