import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startWorkerObservers, type WorkerObservers } from '../../src/health/workerObservers.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import type { DeliveryWorker } from '../../src/assembly/deliveryWorker.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { followBatch } from '../../src/batches/followBatch.js';
import { resumeDelivery } from '../../src/services/queueStatus.js';
import { actOnBatch } from '../../src/services/batchControl.js';
import { runCli } from '../helpers/runCli.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { BREAKER_OPENS_ON_ONE_REFUSAL, BREAKER_STAYS_OPEN } from '../helpers/breakerSettings.js';
import { waitFor } from '../helpers/cliProcess.js';
import type { NotifyEvent } from '../../src/notify/notifyEvent.js';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics/bulkorderMetrics.js';
import { createNotifier } from '../../src/notify/notifier.js';
import { Secret } from '../../src/config.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A webhook receiver on port 0 that keeps every body and answers `status`. */
async function receiver(status = 204): Promise<{ url: string; bodies: unknown[]; events: NotifyEvent[] }> {
  const bodies: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(JSON.parse(body));
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/SECRET-PATH`,
    bodies,
    events: bodies as NotifyEvent[],
  };
}

async function observe(rig: DeliveryRig): Promise<WorkerObservers> {
  const observers = await startWorkerObservers(rig.config, rig.logger, { pollMs: 100 });
  cleanups.push(() => observers.close());
  return observers;
}

async function startWorker(rig: DeliveryRig, observers: WorkerObservers): Promise<DeliveryWorker<OrderPayload>> {
  const worker = await startBusinessDelivery(rig.config, rig.logger, {
    prefix: rig.prefix,
    delivery: rig.config.delivery,
    metrics: observers.metrics,
    ...(observers.onJobEnded === undefined ? {} : { onJobEnded: observers.onJobEnded }),
    ...(observers.onBreakerEvent === undefined ? {} : { onBreakerEvent: observers.onBreakerEvent }),
  });
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= worker.close()); // once: a test may close it before afterEach
  cleanups.push(close);
  return { worker: worker.worker, close };
}

async function importOrders(rig: DeliveryRig, name: string, refs: string[]): Promise<string> {
  const file = await rig.writeFile(name, [HEADER, ...refs.map((ref) => orderRow(ref))].join('\n') + '\n');
  return (await rig.importFile(file)).batchId;
}

const follow = (rig: DeliveryRig, batchId: string) =>
  followBatch(rig.services.batches, batchId, { pollMs: 100, timeoutMs: 20_000 });

/**
 * Imports the orders, then delivers them with a worker started once the file is read and closed once
 * they settled (a worker beside the import would rest each first chunk ~2 s for the read to end).
 */
async function deliver(rig: DeliveryRig, name: string, refs: string[]): Promise<string> {
  const batchId = await importOrders(rig, name, refs);
  const worker = await startBusinessDelivery(rig.config, rig.logger, {
    prefix: rig.prefix,
    delivery: rig.config.delivery,
  });
  try {
    await follow(rig, batchId);
  } finally {
    await worker.close();
  }
  return batchId;
}

/** Several sweeps of every notifier (pollMs 100): what they would send twice has had its chance. */
const settle = () => new Promise((r) => setTimeout(r, 800));

describe('the notification lifecycle', () => {
  it('switching notifications on replays no old batch; a restart loses none and repeats none', async () => {
    const hook = await receiver();
    const rig = await deliveryRig(
      'notify-watermark',
      {},
      { BULKORDER_NOTIFY_URLS: hook.url, BULKORDER_NOTIFY_ALLOW_PRIVATE: '127.0.0.1' },
    );
    cleanups.push(() => rig.close());
    const old = await deliver(rig, 'old.csv', ['O1', 'O2']);

    // Notifications switched on: the old batch is history.
    const observers = await observe(rig);
    const fresh = await deliver(rig, 'fresh.csv', ['F1']);
    await waitFor(() => hook.events.some((e) => e.batchId === fresh), 'the fresh batch');
    await settle();
    expect(hook.events.map((e) => e.batchId)).toEqual([fresh]);
    expect(hook.events[0]).toMatchObject({ id: `batch-settled:${fresh}`, event: 'batch-settled' });

    // Every notifier down while a batch settles: the next one sends it, and only it.
    await observers.close();
    const whileDown = await deliver(rig, 'down.csv', ['D1']);
    await observe(rig); // the next notifier; afterEach closes it
    await waitFor(() => hook.events.some((e) => e.batchId === whileDown), 'the batch settled while no notifier ran');
    await settle();
    expect(hook.events.map((e) => e.batchId)).toEqual([fresh, whileDown]);
    expect(hook.events.some((e) => e.batchId === old)).toBe(false);
  });

  it('two notifiers on one Redis send each event once', async () => {
    const hook = await receiver();
    const rig = await deliveryRig(
      'notify-twice',
      {},
      { BULKORDER_NOTIFY_URLS: hook.url, BULKORDER_NOTIFY_ALLOW_PRIVATE: '127.0.0.1' },
    );
    cleanups.push(() => rig.close());
    const first = await observe(rig);
    const second = await observe(rig);
    // Both files read before the workers start (none of their chunks waits for a read to end).
    const batches = [
      await importOrders(rig, 'a.csv', ['A1', 'A2', 'A3']),
      await importOrders(rig, 'b.csv', ['B1', 'B2']),
    ];
    await startWorker(rig, first);
    await startWorker(rig, second);
    for (const batchId of batches) await follow(rig, batchId);
    await waitFor(() => batches.every((id) => hook.events.some((e) => e.batchId === id)), 'both batches');
    await settle();
    expect(hook.events.map((e) => e.id).sort()).toEqual(batches.map((id) => `batch-settled:${id}`).sort());
  });

  it('a breaker opened is closed by resume, and the batch it dead-lettered is announced recovered', async () => {
    const hook = await receiver();
    const rig = await deliveryRig(
      'notify-resume',
      {},
      {
        BULKORDER_NOTIFY_URLS: hook.url,
        BULKORDER_NOTIFY_ALLOW_PRIVATE: '127.0.0.1',
        ...BREAKER_OPENS_ON_ONE_REFUSAL,
        ...BREAKER_STAYS_OPEN,
      },
    );
    cleanups.push(() => rig.close());
    const observers = await observe(rig);
    rig.simulator.setFaults({ script: [{ status: 403, body: { code: 'FORBIDDEN', message: 'no' }, path: 'orders' }] });
    const batchId = await importOrders(rig, 'blocked.csv', ['R1']);
    await startWorker(rig, observers); // once the file is read
    await waitFor(
      () =>
        hook.events.some((e) => e.event === 'breaker-opened') &&
        hook.events.some((e) => e.event === 'batch-needs-attention'),
      'breaker-opened and batch-needs-attention',
    );
    const opened = hook.events.find((e) => e.event === 'breaker-opened')!;
    expect(opened).toMatchObject({ code: 'HTTP 403 FORBIDDEN', kind: 'orders', waiting: { burst: 1 } });
    expect(opened.text).toContain('next trial at');
    expect(opened.nextTrialAt).toBeDefined();

    // A person's resume closes it (not a trial): the close is still announced, naming who.
    expect(await resumeDelivery(rig.services, rig.logger)).toContain('resumed');
    await waitFor(() => hook.events.some((e) => e.event === 'batch-recovered'), 'batch-recovered');
    await settle();
    const closed = hook.events.filter((e) => e.event === 'breaker-closed');
    expect(closed).toHaveLength(1);
    expect(closed[0]!.id).toBe(opened.id.replace('breaker-opened', 'breaker-closed'));
    expect(closed[0]!.closedBy).toMatch(/^resume by /);
    expect(hook.events.filter((e) => e.event === 'batch-recovered')).toEqual([
      expect.objectContaining({
        id: `batch-recovered:${batchId}`,
        counts: expect.objectContaining({ delivered: 1, deadLettered: 0 }),
      }),
    ]);
    expect(hook.events.filter((e) => e.event === 'breaker-opened')).toHaveLength(1);
  });

  it('a fix that closes what needed a person is announced resolved, once, naming the alert it closes', async () => {
    const hook = await receiver();
    const rig = await deliveryRig(
      'notify-resolved',
      {},
      {
        BULKORDER_NOTIFY_URLS: hook.url,
        BULKORDER_NOTIFY_ALLOW_PRIVATE: '127.0.0.1',
        // A held batch moves only by a person here: no probe within the test.
        BULKORDER_CANARY_PROBE_MS: '600000',
      },
    );
    cleanups.push(() => rig.close());
    const observers = await observe(rig);

    // A dead letter (one refusal: dead-lettered, not the batch's canary), fixed by a retry once the cause is gone.
    rig.simulator.setFaults({
      script: [{ status: 422, body: { code: 'QUANTITY_LIMIT', message: 'at most 100' }, path: 'orders' }],
    });
    const first = await importOrders(rig, 'night.csv', ['N1', 'N2']);
    const worker = await startWorker(rig, observers); // once the file is read
    await follow(rig, first);
    await waitFor(() => hook.events.some((e) => e.event === 'batch-needs-attention'), 'batch-needs-attention');
    const retried = await runCli(['dead-letters', 'retry', '--all', '--wait', '--timeout', '60'], rig.env);
    expect(retried.code).toBe(0);
    await waitFor(() => hook.events.some((e) => e.event === 'batch-resolved'), 'batch-resolved', 90_000);

    // A held batch (its canary refused by a gateway fault), released by a person after the fault is gone.
    rig.simulator.setFaults({
      script: Array.from({ length: 10 }, () => ({
        status: 400,
        path: 'orders' as const,
        body: { code: 'ROUTE_MISSING', message: 'upstream route missing' },
      })),
    });
    const heldFile = await rig.writeFile(
      'held.csv',
      [HEADER, ...Array.from({ length: 10 }, (_, i) => orderRow(`H${i + 1}`))].join('\n') + '\n',
    );
    // Read with no worker beside it, then a worker (a chunk taken while its batch is read rests 1.5-2.5 s).
    await worker.close();
    const { batchId: heldBatch } = await rig.importFile(heldFile);
    await startWorker(rig, observers);
    await waitFor(() => hook.events.some((e) => e.event === 'batch-held'), 'batch-held', 90_000);
    rig.simulator.setFaults({ script: [] });
    await actOnBatch(rig.services, heldBatch, 'release', { by: 'anna', why: 'gateway fixed' });
    await waitFor(() => hook.events.some((e) => e.event === 'batch-released'), 'batch-released');
    await followBatch(rig.services.batches, heldBatch, { timeoutMs: 60_000 });
    await settle();
    await settle();

    const resolved = hook.events.filter((e) => e.event === 'batch-resolved');
    expect(resolved).toEqual([
      expect.objectContaining({
        id: `batch-resolved:${first}`,
        batchId: first,
        resolves: `batch-needs-attention:${first}`,
        counts: expect.objectContaining({ deadLettered: 0, held: 0, resolved: 1 }),
      }),
    ]);
    expect(hook.events.filter((e) => e.id === `batch-needs-attention:${first}`)).toHaveLength(1);
    expect(hook.events.some((e) => e.event === 'batch-recovered')).toBe(false);
    const held = hook.events.filter((e) => e.event === 'batch-held');
    const released = hook.events.filter((e) => e.event === 'batch-released');
    expect(held).toHaveLength(1);
    expect(released).toEqual([expect.objectContaining({ batchId: heldBatch, resolves: held[0]!.id })]);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 12, duplicateOrdersAccepted: 0 });
  }, 240_000);

  it('a refused file is file-refused with its code, reason and exit code 3', async () => {
    const hook = await receiver();
    const rig = await deliveryRig(
      'notify-refused',
      {},
      { BULKORDER_NOTIFY_URLS: hook.url, BULKORDER_NOTIFY_ALLOW_PRIVATE: '127.0.0.1' },
    );
    cleanups.push(() => rig.close());
    await observe(rig);
    const file = await rig.writeFile(
      'broken.csv',
      [HEADER, orderRow('X1'), `${orderRow('X2')},"never closed`].join('\n') + '\n',
    );
    await expect(rig.importFile(file)).rejects.toMatchObject({ exitCode: 3 });
    await waitFor(() => hook.events.length > 0, 'the refusal');
    await settle();
    expect(hook.events).toHaveLength(1);
    expect(hook.events[0]).toMatchObject({
      event: 'file-refused',
      exitCode: 3,
      code: 'CSV_QUOTE_NOT_CLOSED',
      file: 'broken.csv',
    });
    expect(hook.events[0]!.reason).toContain('never closed');
    expect(JSON.stringify(hook.events[0])).not.toContain(rig.dir);
  });

  it('Slack gets text + blocks, Teams an Adaptive Card, others the JSON; a failing webhook is logged by its masked URL and counted', async () => {
    const json = await receiver();
    const slack = await receiver();
    const teams = await receiver();
    const failing = await receiver(500);
    let logText = '';
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _e, done) {
          logText += chunk.toString();
          done();
        },
      }),
    });
    const metrics = createMetrics({ processMetrics: false });
    const notifier = createNotifier(
      {
        urls: [json.url, `slack:${slack.url}`, `teams:${teams.url}`, failing.url.replace('/hook/', '/broken/')].map(
          (u) => new Secret(u),
        ),
        timeoutMs: 2000,
        // The receivers listen on loopback: allowed here, as an operator's own receiver would be.
        allowPrivate: { any: false, hosts: [], networks: ['127.0.0.1'] },
        smtp: undefined,
      },
      logger,
      { onFailure: (destination) => metrics.notificationFailed(destination) },
    );
    const event: NotifyEvent = {
      id: 'batch-settled:b-1',
      event: 'batch-settled',
      env: 'acceptance',
      text: 'Batch b-1 (x.csv) settled: all 2 queued orders delivered.\nhttps://dash.example/batches/b-1',
      at: new Date().toISOString(),
      batchId: 'b-1',
      file: 'x.csv',
      counts: { delivered: 2 },
      exitCode: 0,
      dashboardUrl: 'https://dash.example/batches/b-1',
    };
    await notifier.notify(event);
    notifier.close();

    expect(json.bodies).toEqual([event]);
    const slackBody = slack.bodies[0] as {
      text: string;
      blocks: { type: string; text?: { text: string }; fields?: { text: string }[] }[];
    };
    expect(slack.bodies).toHaveLength(1);
    expect(slackBody.text).toBe(event.text);
    expect(slackBody.blocks[0]).toMatchObject({
      type: 'section',
      text: { type: 'mrkdwn', text: 'Batch b-1 (x.csv) settled: all 2 queued orders delivered.' },
    });
    expect(slackBody.blocks[1]!.fields!.map((f) => f.text)).toContain('*Event id*\nbatch-settled:b-1');
    expect(slackBody.blocks.at(-1)).toMatchObject({
      type: 'actions',
      elements: [{ type: 'button', url: 'https://dash.example/batches/b-1' }],
    });
    expect(teams.bodies).toHaveLength(1);
    expect(teams.bodies[0]).toMatchObject({
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: {
            type: 'AdaptiveCard',
            version: '1.4',
            body: [
              { type: 'TextBlock', text: 'Batch b-1 (x.csv) settled: all 2 queued orders delivered.' },
              { type: 'FactSet' },
            ],
            actions: [{ type: 'Action.OpenUrl', url: 'https://dash.example/batches/b-1' }],
          },
        },
      ],
    });

    // 3 attempts, then a warning naming the webhook (secret part masked) and a count in the metric.
    expect(failing.bodies).toHaveLength(3);
    const port = new URL(failing.url).port;
    const warning = logText
      .split('\n')
      .filter((l) => l.includes('failed after'))
      .map((l) => JSON.parse(l) as { url: string; webhook: number; msg: string });
    expect(warning).toHaveLength(1);
    expect(warning[0]).toMatchObject({ webhook: 4, url: `http://127.0.0.1:${port}/broken/***` });
    expect(warning[0]!.msg).toContain(`http://127.0.0.1:${port}/broken/***`);
    expect(logText).not.toContain('SECRET-PATH');
    expect((await metrics.render()).body).toContain(
      `bulkorder_notification_failures_total{destination="http://127.0.0.1:${port}/broken/***"} 1`,
    );
  });
});
