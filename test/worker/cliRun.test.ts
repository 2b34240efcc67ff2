import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { BREAKER_STAYS_OPEN, ONE_BATCH_IS_THE_API } from '../helpers/breakerSettings.js';
import { killAllCli, startCli, waitFor } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';
import { startPrivateRedis } from '../helpers/privateRedis.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await killAllCli();
  await rig?.close();
  rig = undefined;
});

const CANARY_SECRET = 'canary-Secret-7f3a9c1e-DO-NOT-LOG';

describe('bulkorder import --wait and worker, as a user runs them', () => {
  it('delivers a file end to end, writes results and rejects, exits 4 for rows that need attention, and never writes a secret or token', async () => {
    rig = await deliveryRig(
      'cli',
      {
        credentials: {
          business: { clientId: 'canary-client', clientSecret: CANARY_SECRET },
          cafetariaplan: { clientId: 'c', clientSecret: 'c-secret' },
        },
      },
      { BULKORDER_BUSINESS_CLIENT_ID: 'canary-client', BULKORDER_BUSINESS_CLIENT_SECRET: CANARY_SECRET },
    );
    const env = { ...rig.env, LOG_LEVEL: 'trace' };
    const worker = startCli(['worker', '--concurrency', '3'], env);
    const file = await rig.writeFile(
      'night.csv',
      [
        HEADER,
        orderRow('N-1'),
        orderRow('N-2'),
        orderRow('N-3', 5999),
        'N-4,1001,Anna,de Vries,Keizersgracht,12,1015 CX,Amsterdam,NL,nl,=HYPERLINK("http://x"),+31612345678,5001,1',
      ].join('\n') + '\n',
    );
    const importer = await runCli(['import', file, '--wait', '--timeout', '120'], env);
    expect(importer.code).toBe(4);
    expect(importer.output).toMatch(/2 delivered, 1 dead-lettered, 0 held/);

    const results = await readFile(join(rig.dir, 'night.csv.results.csv'), 'utf8');
    expect(results.charCodeAt(0)).not.toBe(0xfeff); // the input has no byte-order mark: its results neither
    expect(results).toMatch(/ref\.1001\.N-1,N-1,2,delivered,SIM-\d+,201/);
    expect(results).toMatch(/N-3,4,dead-lettered,,422,PRODUCT_UNKNOWN/);
    expect(results).toMatch(/N-4,5,rejected/);
    const rejects = await readFile(join(rig.dir, 'night.csv.rejects.csv'), 'utf8');
    expect(rejects).toContain(`'=HYPERLINK`);
    expect(rejects).not.toMatch(/,=HYPERLINK/);

    // SIGTERM: the worker finishes what it has and exits 0.
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    recordReliability({
      fault: 'worker SIGTERM after its batch; canary secret and token over the whole run',
      behaviour: 'clean exit 0; neither secret nor token in any log line or file written',
      orders: 4,
      lost: 0,
      duplicates: rig.simulator.counters().duplicateOrdersAccepted,
      held: 0,
    });

    // The canary: neither the client secret nor the token the workers used appears in any output or file.
    const redis = new Redis(rig.config.redisUrl.reveal());
    const tokenKeys = (await redis.keys(`${rig.prefix}:token:*`)).filter((k) => !/:(lock|failure)$/.test(k));
    const tokens = (await Promise.all(tokenKeys.map((k) => redis.hget(k, 'value')))).filter(
      (v): v is string => v !== null,
    );
    redis.disconnect();
    expect(tokens.length).toBeGreaterThan(0);
    const written = [
      worker.output(),
      importer.output,
      ...(await Promise.all((await readdir(rig.dir)).map((f) => readFile(join(rig!.dir, f), 'utf8')))),
    ];
    expect(worker.output()).toMatch(/"msg":"delivered"/); // the log was really captured, at trace level
    // Structured per-job lines: batch, order key, file, source lines, attempt, status, duration.
    const delivered = worker
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"delivered"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(delivered[0]).toMatchObject({
      batchId: expect.stringMatching(/^b-/),
      orderKey: expect.stringMatching(/^ref\.1001\.N-/),
      file,
      lines: [expect.any(Number)],
      attempt: 1,
      status: 201,
      durationMs: expect.any(Number),
    });
    const refused = worker
      .output()
      .split('\n')
      .find((line) => line.includes('dead-lettered: refused by the API'));
    expect(JSON.parse(refused!)).toMatchObject({
      status: 422,
      code: 'PRODUCT_UNKNOWN',
      body: { code: 'PRODUCT_UNKNOWN' },
    });
    for (const text of written) {
      expect(text).not.toContain(CANARY_SECRET);
      for (const token of tokens) expect(text).not.toContain(token);
    }
  }, 180_000);

  it('opens the circuit breaker instead of dead-lettering a night when every request is refused for the User-Agent', async () => {
    rig = await deliveryRig(
      'breaker',
      {},
      {
        BULKORDER_BREAKER_MIN_ATTEMPTS: '4',
        BULKORDER_BREAKER_MIN_ORDERS: '3',
        ...BREAKER_STAYS_OPEN,
        ...ONE_BATCH_IS_THE_API,
      },
    );
    const rows = [HEADER];
    // Every customer alike: the breaker counts a refusal as the API's only across several customers.
    for (let i = 1; i <= 20; i++) rows.push(orderRow(`UA-${i}`, 5001, 1, 1001 + (i % 5)));
    const file = await rig.writeFile('ua.csv', rows.join('\n') + '\n');
    // A User-Agent our config accepts but the API refuses: the simulator refuses library brands.
    rig.simulator.setFaults({
      script: Array.from({ length: 40 }, () => ({
        path: 'orders' as const,
        status: 400,
        body: { code: 'USER_AGENT_INVALID', message: 'identify your company' },
      })),
    });
    startCli(['worker', '--concurrency', '2'], { ...rig.env, LOG_LEVEL: 'warn' });
    const importer = await runCli(['import', file], rig.env);
    expect(importer.code).toBe(0);
    await waitFor(async () => rig!.services.queue.isPaused(), 'the breaker to pause the queue');
    const status = await runCli(['status', '--json'], rig.env);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.output.slice(status.output.indexOf('{'))) as {
      breaker: { state: string; code: string; signature: string };
      deadLetters: number;
      queue: { paused: boolean };
      workers: unknown[];
    };
    expect(report.queue.paused).toBe(true);
    expect(report.breaker).toMatchObject({
      state: 'open',
      code: 'USER_AGENT_INVALID',
      signature: 'HTTP 400 USER_AGENT_INVALID',
    });
    expect(report.workers).toHaveLength(1);
    // Refusals are dead-lettered at once; only the burst before the breaker opened (4 + in flight), not the night.
    expect(report.deadLetters).toBeGreaterThanOrEqual(4);
    expect(report.deadLetters).toBeLessThanOrEqual(4 + 2);
    expect(rig.simulator.counters().ordersAccepted).toBe(0);
    recordReliability({
      fault: 'every request refused for the User-Agent',
      behaviour: `circuit breaker opens after 4 (test minimum): queue paused, status says why; ${report.deadLetters} dead-lettered by the burst, requeued when it closes`,
      orders: 20,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 180_000);

  it('refuses a Redis whose maxmemory-policy may evict orders (exit 5, names the setting)', async () => {
    rig = await deliveryRig('evict');
    const evicting = await startPrivateRedis(['--maxmemory-policy', 'allkeys-lru']);
    try {
      const file = await rig.writeFile('one.csv', [HEADER, orderRow('E-1')].join('\n') + '\n');
      const importer = await runCli(['import', file], { ...rig.env, REDIS_URL: evicting.url });
      expect(importer.code).toBe(5);
      expect(importer.output).toMatch(/maxmemory-policy 'allkeys-lru'.*noeviction/);
      const down = await runCli(['import', file], { ...rig.env, REDIS_URL: 'redis://127.0.0.1:1' });
      expect(down.code).toBe(5);
      expect(down.output).toMatch(/Redis does not answer.*docker compose up -d redis/);
      recordReliability({
        fault: 'Redis unreachable at import time; Redis with an eviction policy',
        behaviour: 'import refused before anything was created, exit 5, saying how to get a fit Redis',
        orders: 1,
        lost: 0,
        duplicates: 0,
        held: 0,
      });
    } finally {
      await evicting.stop();
    }
    // Two CLI starts and a private redis-server: on 2 loaded cores that has taken over 30 s.
  }, 180_000);
});
