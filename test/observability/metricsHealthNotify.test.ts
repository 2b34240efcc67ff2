import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startWorkerObservers, type WorkerObservers } from '../../src/health/workerObservers.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import type { DeliveryWorker } from '../../src/assembly/deliveryWorker.js';
import type { OrderPayload } from '../../src/ingest/types.js';
import { followBatch } from '../../src/batches/followBatch.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { BREAKER_OPENS_ON_ONE_REFUSAL } from '../helpers/breakerSettings.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';
import { waitFor } from '../helpers/cliProcess.js';
import type { NotifyEvent } from '../../src/notify/notifyEvent.js';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import type { ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { SCHEDULES_QUEUE } from '../../src/queues.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Parses Prometheus text exposition into `name{labels}` -> value. */
function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

async function receiver(): Promise<{ url: string; events: NotifyEvent[] }> {
  const events: NotifyEvent[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      events.push(JSON.parse(body) as NotifyEvent);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/SECRET-PATH`, events };
}

async function startWorker(rig: DeliveryRig, observers: WorkerObservers): Promise<DeliveryWorker<OrderPayload>> {
  const worker = await startBusinessDelivery(rig.config, rig.logger, {
    prefix: rig.prefix,
    delivery: rig.config.delivery,
    ...(observers.metrics === undefined ? {} : { metrics: observers.metrics }),
    ...(observers.onJobEnded === undefined ? {} : { onJobEnded: observers.onJobEnded }),
    ...(observers.onScheduledImport === undefined ? {} : { onScheduledImport: observers.onScheduledImport }),
    ...(observers.onBreakerEvent === undefined ? {} : { onBreakerEvent: observers.onBreakerEvent }),
  });
  cleanups.push(() => worker.close());
  return worker;
}

describe('worker metrics, health and notifications', () => {
  it('/metrics counts equal the batch, and the webhook and the e-mail get the batch notification', async () => {
    const hook = await receiver();
    const mails: string[] = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, done) {
        let text = '';
        stream.on('data', (c: Buffer) => (text += c.toString()));
        stream.on('end', () => {
          mails.push(text);
          done();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => smtp.close(() => r(undefined))));
    const smtpPort = (smtp.server.address() as AddressInfo).port;

    const rig = await deliveryRig(
      'metrics',
      {},
      {
        BULKORDER_NOTIFY_URLS: hook.url,
        BULKORDER_NOTIFY_ALLOW_PRIVATE: '127.0.0.1',
        BULKORDER_NOTIFY_SMTP_HOST: '127.0.0.1',
        BULKORDER_NOTIFY_SMTP_PORT: String(smtpPort),
        BULKORDER_NOTIFY_SMTP_FROM: 'bulkorder@example.com',
        BULKORDER_NOTIFY_SMTP_TO: 'ops@example.com',
        BULKORDER_DASHBOARD_URL: 'https://bulkorder.example.com',
      },
    );
    cleanups.push(() => rig.close());
    const observers = await startWorkerObservers(rig.config, rig.logger, { httpPort: 0, pollMs: 200 });
    cleanups.push(() => observers.close());
    await startWorker(rig, observers);

    // Five orders: four delivered, one refused (product 9999 is not in the simulator's catalogue).
    const rows = ['A1', 'A2', 'A3', 'A4'].map((ref) => orderRow(ref)).concat(orderRow('B1', 9999));
    const file = await rig.writeFile('night.csv', [HEADER, ...rows].join('\n') + '\n');
    const imported = await rig.importFile(file);
    const { batch } = await followBatch(rig.services.batches, imported.batchId, { timeoutMs: 20_000 });
    expect(batch.delivered).toBe(4);
    expect(batch.dead).toBe(1);

    const metrics = parseMetrics(await (await fetch(`${observers.url}/metrics`)).text());
    expect(metrics.get('bulkorder_orders_total{api="business",outcome="delivered"}')).toBe(batch.delivered);
    expect(metrics.get('bulkorder_orders_total{api="business",outcome="dead_lettered"}')).toBe(batch.dead);
    expect(metrics.get('bulkorder_api_refusals_total{api="business",status="422",code="PRODUCT_UNKNOWN"}')).toBe(1);
    expect(metrics.get('bulkorder_api_request_duration_seconds_count{api="business",kind="delivered"}')).toBe(4);
    expect(metrics.get('bulkorder_token_requests_total{api="business",result="ok"}')).toBe(1);
    expect(metrics.get('bulkorder_queue_jobs{api="business",state="waiting"}')).toBe(0);
    expect(metrics.get('bulkorder_workers{api="business"}')).toBeGreaterThanOrEqual(1);
    expect(metrics.get('bulkorder_dead_letters')).toBe(1);
    expect(metrics.get('bulkorder_batches{state="settled"}')).toBe(1);
    // No per-order labels anywhere.
    expect(await (await fetch(`${observers.url}/metrics`)).text()).not.toMatch(/A1|B1|orderKey|batch_id/);

    await waitFor(() => hook.events.length > 0 && mails.length > 0, 'the batch notification');
    const event = hook.events[0]!;
    expect(event).toMatchObject({
      event: 'batch-needs-attention',
      batchId: imported.batchId,
      file: 'night.csv',
      exitCode: 4,
      counts: { delivered: 4, deadLettered: 1 },
      topErrorCodes: [{ code: 'PRODUCT_UNKNOWN', count: 1 }],
      dashboardUrl: `https://bulkorder.example.com/batches/${imported.batchId}`,
    });
    expect(event.text).toContain('needs attention');
    const all = JSON.stringify(hook.events) + mails.join('\n');
    expect(all).not.toMatch(/Anna|de Vries|example\.nl|\+316|Keizersgracht|sim-business-secret|SECRET-PATH/);
    expect(mails[0]).toContain(imported.batchId);
    expect(mails[0]).toContain('PRODUCT_UNKNOWN');
    // Exactly once, even though the sweep keeps looking.
    await new Promise((r) => setTimeout(r, 600));
    expect(hook.events.filter((e) => e.batchId === imported.batchId)).toHaveLength(1);
  });

  it('a clean batch is announced as settled, then a schedule that found no file, then the breaker opening', async () => {
    const hook = await receiver();
    const rig = await deliveryRig(
      'notify',
      {},
      {
        BULKORDER_NOTIFY_URLS: hook.url,
        BULKORDER_NOTIFY_ALLOW_PRIVATE: '127.0.0.1',
        ...BREAKER_OPENS_ON_ONE_REFUSAL,
      },
    );
    cleanups.push(() => rig.close());
    const observers = await startWorkerObservers(rig.config, rig.logger, { pollMs: 200 });
    cleanups.push(() => observers.close());
    await startWorker(rig, observers);
    const file = await rig.writeFile('clean.csv', [HEADER, orderRow('C1'), orderRow('C2')].join('\n') + '\n');
    const imported = await rig.importFile(file);
    await followBatch(rig.services.batches, imported.batchId, { timeoutMs: 20_000 });
    await waitFor(() => hook.events.some((e) => e.event === 'batch-settled'), 'batch-settled');
    expect(hook.events.find((e) => e.event === 'batch-settled')).toMatchObject({
      batchId: imported.batchId,
      exitCode: 0,
      counts: { delivered: 2 },
    });

    // A schedule whose source names no file (the upstream export did not run).
    const scheduleQueue = new Queue<ScheduledImportData>(SCHEDULES_QUEUE, {
      connection: rig.services.redis,
      prefix: rig.prefix,
    });
    cleanups.push(() => scheduleQueue.close());
    await new ScheduleStore(scheduleQueue).set({
      name: 'nightly',
      cron: '* * * * * *',
      source: join(rig.dir, 'orders-*.csv'),
    });
    await waitFor(() => hook.events.some((e) => e.event === 'no-file'), 'no-file', 20_000);
    expect(hook.events.find((e) => e.event === 'no-file')).toMatchObject({ schedule: 'nightly' });
    await new ScheduleStore(scheduleQueue).remove('nightly');

    // With the minimums at 1 and a 10% refusal share, the one refusal in this window opens the breaker.
    rig.simulator.setFaults({ script: [{ status: 403, body: { code: 'FORBIDDEN', message: 'no' }, path: 'orders' }] });
    const second = await rig.writeFile('blocked.csv', [HEADER, orderRow('D1')].join('\n') + '\n');
    await rig.importFile(second);
    await waitFor(() => hook.events.some((e) => e.event === 'breaker-opened'), 'breaker-opened', 20_000);
    expect(hook.events.find((e) => e.event === 'breaker-opened')?.text).toContain('Circuit breaker OPEN');
  });

  it('/healthz stays 200 with Redis stopped; /readyz does not', async () => {
    const redis: PrivateRedis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const config = loadConfig({
      env: {},
      overrides: {
        REDIS_URL: redis.url,
        LOG_LEVEL: 'silent',
        BULKORDER_REDIS_PREFIX: 'health-test',
        BULKORDER_BASE_URL: 'http://127.0.0.1:9',
        BULKORDER_USER_AGENT: 'Test-BulkorderTests',
        BULKORDER_BUSINESS_CLIENT_ID: 'id',
        BULKORDER_BUSINESS_CLIENT_SECRET: 'secret',
      },
    });
    const observers = await startWorkerObservers(config, createLogger({ level: 'silent' }), { httpPort: 0 });
    cleanups.push(() => observers.close());
    expect((await fetch(`${observers.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${observers.url}/readyz`)).status).toBe(200);

    await redis.kill();
    expect((await fetch(`${observers.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${observers.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain('REDIS_UNAVAILABLE');
    // /metrics still answers (without the shared gauges).
    expect((await fetch(`${observers.url}/metrics`)).status).toBe(200);
    observers.shuttingDown();
    await redis.restart();
    const afterRestart = await fetch(`${observers.url}/readyz`);
    expect(afterRestart.status).toBe(503);
    expect(JSON.stringify(await afterRestart.json())).toContain('shutting down');
  });
});
