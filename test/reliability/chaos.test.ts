/**
 * Issue 37's seeded chaos run: rounds of imports during which the importer, a worker and Redis (a
 * private redis-server with AOF `everysec`, restarted on its data) are SIGKILLed at moments a seeded
 * PRNG picks; then every file is imported again with `--wait`. Lost and duplicated orders are
 * counted at the API (the simulator): every order of every file must end stored there exactly once,
 * or held for review (an order a killed worker sent and whose answer it lost may have reached the
 * API: held, never sent again) or dead-lettered. The seed is printed; CHAOS_SEED replays a run,
 * CHAOS_ROUNDS sets the rounds (2 by default, the CI run; `npm run reliability` runs 10).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { randomInt } from 'node:crypto';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import { createPrng } from '../../src/simulator/prng.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { killAllCli, startCli, waitFor, type CliProcess } from '../helpers/cliProcess.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';
import { runCli } from '../helpers/runCli.js';
import { chunkJobId } from '../../src/queues.js';

const SEED = Number(process.env.CHAOS_SEED ?? randomInt(1, 2 ** 31));
const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 2);
/** Orders per chunk job (BULKORDER_ORDERS_PER_JOB). */
const ORDERS_PER_JOB = 10;
/** Orders per round's file: a few chunks, imported in about a second. */
const PER_ROUND = 300;
const WORKERS = 2;

let rig: DeliveryRig | undefined;
let redis: PrivateRedis | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close().catch(() => undefined);
  await redis?.stop();
  rig = undefined;
  redis = undefined;
});

type Victim = 'importer' | 'worker' | 'redis';

/** One kill: whom, how long after the round's import started, and how long until it is started again. */
interface Kill {
  victim: Victim;
  afterMs: number;
  downMs: number;
}

/** A round's kills, drawn from the PRNG: one to three, at random moments of the first 3 s. */
function drawKills(random: () => number): Kill[] {
  const victims: Victim[] = ['importer', 'worker', 'redis'];
  const kills = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
    victim: victims[Math.floor(random() * victims.length)]!,
    afterMs: Math.floor(random() * 3000),
    downMs: Math.floor(random() * 1500),
  }));
  return kills.sort((a, b) => a.afterMs - b.afterMs);
}

/**
 * What a failure shows of orders found neither at the API nor parked: each batch with such orders,
 * its chunk jobs' states and their records' ledger states, and the end of each worker's log.
 */
async function whereLost(r: DeliveryRig, workers: readonly (CliProcess | undefined)[]): Promise<string> {
  const lines: string[] = [];
  const { queue, ledger, batches } = r.services;
  for (const batch of await batches.list(100)) {
    if (batch.delivered + batch.dead + batch.held >= batch.enqueued) continue;
    lines.push(`batch ${JSON.stringify(batch)}`);
    for (let n = 1; n <= Math.ceil(PER_ROUND / ORDERS_PER_JOB); n++) {
      const job = await queue.getJob(chunkJobId(batch.id, n));
      if (job === undefined) continue;
      const keys = (job.data as { records?: { key: string }[] }).records?.map((record) => record.key) ?? [];
      const states = (await ledger.getMany(keys)).map((entry) => entry?.state ?? 'none');
      lines.push(
        `  ${job.id}: ${await job.getState()} attempts ${job.attemptsMade} stalled ${job.stalledCounter} ${job.failedReason ?? ''} records ${states.join(',')}`,
      );
    }
  }
  for (const worker of workers) lines.push(`worker log: ${worker?.output().slice(-3000) ?? '(none)'}`);
  return `\n${lines.join('\n')}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a seeded chaos run (real CLI processes, a private Redis with AOF everysec, the simulator)', () => {
  it(`${ROUNDS} rounds of SIGKILLs of importer, workers and Redis, then re-runs: 0 lost, 0 duplicates at the API`, async () => {
    console.log(`chaos run: CHAOS_SEED=${SEED} CHAOS_ROUNDS=${ROUNDS} (set both to replay it)`);
    const random = createPrng(SEED);
    redis = await startPrivateRedis(['--appendonly', 'yes', '--appendfsync', 'everysec']);
    rig = await deliveryRig(
      'chaos',
      // Latency keeps requests in flight when a worker dies: their answers are lost with it.
      { faults: { latencyMs: 40, jitterMs: 40 } },
      {
        REDIS_URL: redis.url,
        BULKORDER_ORDERS_PER_JOB: String(ORDERS_PER_JOB),
        BULKORDER_CONCURRENCY: '8',
        BULKORDER_HTTP_DEADLINE_MS: '3000',
        BULKORDER_STALLED_INTERVAL_MS: '1000',
        LOG_LEVEL: 'warn',
      },
    );
    const r = rig;
    const server = redis;
    const workers: (CliProcess | undefined)[] = [];
    const startWorker = (i: number) => (workers[i] = startCli(['worker'], r.env));
    for (let i = 0; i < WORKERS; i++) startWorker(i);
    // A worker that exits on its own (Redis gone too long) is started again, as its supervisor would.
    const supervisor = setInterval(() => {
      for (let i = 0; i < WORKERS; i++) {
        const w = workers[i];
        if (w !== undefined && (w.child.exitCode !== null || w.child.signalCode !== null)) startWorker(i);
      }
    }, 500);
    const files: string[] = [];
    const log: string[] = [];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const file = await r.writeFile(`round-${round}.csv`, ordersCsv(`C${round}`, PER_ROUND));
        files.push(file);
        const kills = drawKills(random);
        log.push(`round ${round}: ${kills.map((k) => `${k.victim}@${k.afterMs}ms/${k.downMs}ms`).join(', ')}`);
        const importer = startCli(['import', file], r.env);
        const started = Date.now();
        for (const kill of kills) {
          await sleep(kill.afterMs - (Date.now() - started));
          if (kill.victim === 'importer') importer.child.kill('SIGKILL');
          else if (kill.victim === 'worker') {
            const i = Math.floor(random() * WORKERS);
            const victim = workers[i];
            workers[i] = undefined; // not the supervisor's to restart: this round does, after downMs
            victim?.child.kill('SIGKILL');
            await victim?.exited;
            await sleep(kill.downMs);
            startWorker(i);
          } else {
            await server.kill();
            await sleep(kill.downMs);
            await server.restart();
          }
        }
        // The importer ends (or was killed); one that outlived Redis's absence exits 5, which a re-run mends.
        const exit = await importer.exited;
        log.push(`round ${round}: importer ended ${exit}`);
        expect([0, 5, 'SIGKILL'], `${log.join('\n')}\n${importer.output().slice(-2000)}`).toContain(exit);
      }
      // Every file again, with --wait: each exits once its orders are delivered, held or dead-lettered.
      for (const file of files) {
        const run = await runCli(['import', file, '--wait', '--timeout', '300'], r.env);
        expect([0, 4], `${file}: ${run.output.slice(-3000)}`).toContain(run.code);
      }
      const held = new ParkedStore(r.services.redis, r.services.keys, r.services.ledger, 'held');
      const dead = new ParkedStore(r.services.redis, r.services.keys, r.services.ledger, 'dead');
      const refs = files.flatMap((_, i) => Array.from({ length: PER_ROUND }, (_, j) => `C${i + 1}-${j + 1}`));
      // The API's body carries no orderRef; the rows' e-mail addresses name it (anna.<ref>@example.nl).
      const stored = (): Set<string> =>
        new Set(
          r.simulator
            .orders()
            .map((o) => (/anna\.([a-z0-9-]+)@/.exec(JSON.stringify(o.payload))?.[1] ?? '').toUpperCase()),
        );
      const parked = async (): Promise<Set<string>> => {
        const found = new Set<string>();
        for (const store of [held, dead]) for await (const item of store.scan()) found.add(item.record.orderRef ?? '');
        return found;
      };
      const lostNow = async (): Promise<string[]> => {
        const api = stored();
        const kept = await parked();
        return refs.filter((ref) => !api.has(ref) && !kept.has(ref));
      };
      // --wait returned: nothing may be left in flight; poll briefly in case the last settle is on its way.
      await waitFor(async () => (await lostNow()).length === 0, 'every order stored or parked', 30_000).catch(
        () => undefined,
      );
      const lost = await lostNow();
      const counters = r.simulator.counters();
      const heldCount = await held.count();
      console.log(
        `chaos run (seed ${SEED}): ${refs.length} orders, ${stored().size} stored at the API, ${heldCount} held, ${lost.length} lost, ${counters.duplicateOrdersAccepted} duplicates\n${log.join('\n')}`,
      );
      const context = `CHAOS_SEED=${SEED} CHAOS_ROUNDS=${ROUNDS}\n${log.join('\n')}\nlost: ${lost.slice(0, 20).join(', ')}${lost.length > 0 ? await whereLost(r, workers) : ''}`;
      expect(lost, context).toEqual([]);
      expect(counters.duplicateOrdersAccepted, context).toBe(0);
      // A failure names what was dead-lettered and why (one run of 10 rounds at load left 24, likely jobs BullMQ
      // failed after their workers died holding them three times: BULKORDER_MAX_STALLS since).
      const deadLetters: string[] = [];
      for await (const item of dead.scan())
        deadLetters.push(`${item.record.orderRef ?? ''} ${item.record.code ?? ''} ${item.record.message ?? ''}`);
      expect(deadLetters, context).toEqual([]);
      expect(await dead.count(), context).toBe(0);
      recordReliability({
        fault: `seeded chaos run: ${ROUNDS} rounds of SIGKILLs of importer, workers and Redis (AOF everysec), then re-runs (seed ${SEED})`,
        behaviour:
          'every order stored once at the API or held for review (sent by a killed worker whose answer was lost); re-runs exit 0 or 4',
        orders: refs.length,
        lost: lost.length,
        duplicates: counters.duplicateOrdersAccepted,
        held: heldCount,
      });
    } finally {
      clearInterval(supervisor);
    }
  }, 900_000);
});
