import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { projectRoot } from '../../src/paths.js';
import { stopTracing } from '../../src/tracing/tracing.js';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
import { deliveryRig, ordersCsv } from '../helpers/deliveryRig.js';

/** One span as OTLP/HTTP JSON carries it (the fields read here). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}
interface OtlpBody {
  resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
}
const CONSUMER = 5;
const CLIENT = 3;

/** A real OTLP/HTTP receiver on port 0: keeps every body POSTed to /v1/traces. */
async function startReceiver(): Promise<{
  url: string;
  bodies: string[];
  spans(): OtlpSpan[];
  close(): Promise<void>;
}> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    spans: () =>
      bodies.flatMap((b) =>
        (JSON.parse(b) as OtlpBody).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
      ),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const attr = (span: OtlpSpan, key: string): string | undefined => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : String(value.stringValue ?? value.intValue);
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await killAllCli();
  for (const c of cleanups.splice(0).reverse()) await c();
});

// What the orders of ordersCsv hold about a person (test/helpers/deliveryRig.ts orderRow): none may reach a trace.
const PERSONAL = ['Anna', 'Vries', 'example.nl', '612345678', 'Keizersgracht', '1015 CX', 'Amsterdam'];

describe('OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('one trace per batch: the import, each chunk job across the queue, each POST with its answer, no personal data', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const rig = await deliveryRig('tracing', {}, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    cleanups.push(() => rig.close());
    await rig.startWorker();
    const imported = await rig.importFile(await rig.writeFile('twenty.csv', ordersCsv('TR', 20)));
    const { batch, settled } = await followBatch(rig.services.batches, imported.batchId, {
      timeoutMs: 120_000,
      out: { write: () => undefined },
    });
    expect(settled).toBe(true);
    expect(batch.delivered).toBe(20);
    await stopTracing(); // sends every span still buffered

    const spans = receiver.spans();
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const imports = spans.filter((s) => s.name === 'bulkorder.import');
    expect(imports).toHaveLength(1);
    const root = imports[0]!;
    expect(attr(root, 'bulkorder.batch_id')).toBe(imported.batchId);
    expect(attr(root, 'bulkorder.orders')).toBe('20');
    expect(attr(root, 'bulkorder.rejected')).toBe('0');

    const posts = spans.filter((s) => s.name === 'bulkorder.post');
    expect(posts).toHaveLength(20);
    const ancestors = (span: OtlpSpan): OtlpSpan[] => {
      const chain: OtlpSpan[] = [];
      for (let at = byId.get(span.parentSpanId ?? ''); at !== undefined; at = byId.get(at.parentSpanId ?? ''))
        chain.push(at);
      return chain;
    };
    for (const post of posts) {
      expect(post.traceId).toBe(root.traceId);
      expect(attr(post, 'bulkorder.batch_id')).toBe(imported.batchId);
      expect(attr(post, 'bulkorder.order_key')).toMatch(/^ref\./);
      expect(attr(post, 'bulkorder.outcome')).toBe('delivered');
      expect(attr(post, 'http.response.status_code')).toMatch(/^20\d$/);
      expect(attr(post, 'bulkorder.remote_order_id')).toBeDefined();
      const chain = ancestors(post);
      // Up through BullMQ's consumer span (the job, in the worker) to the import that queued it.
      expect(chain.at(-1)?.spanId).toBe(root.spanId);
      expect(chain.some((s) => s.kind === CONSUMER && s.name.startsWith('process'))).toBe(true);
    }
    expect(new Set(posts.map((p) => attr(p, 'bulkorder.order_key'))).size).toBe(20);
    // undici's client span under each POST; Redis script calls as child spans within the trace.
    const underPosts = spans.filter((s) => s.kind === CLIENT && posts.some((p) => p.spanId === s.parentSpanId));
    expect(underPosts.length).toBeGreaterThanOrEqual(20);
    expect(spans.filter((s) => s.traceId === root.traceId && s.name.startsWith('redis EVAL')).length).toBeGreaterThan(
      0,
    );

    const everything = receiver.bodies.join('\n');
    for (const personal of PERSONAL) expect(everything, personal).not.toContain(personal);
  }, 180_000);

  it('off (no OTEL_*), worker and import load no OpenTelemetry module; on, they do', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const rig = await deliveryRig('tracing-off');
    cleanups.push(() => rig.close());
    const file = await rig.writeFile('five.csv', ordersCsv('OFF', 5));
    const hook = ['--import', join(projectRoot, 'test/helpers/recordLoads.mjs')];
    const loads = (name: string): { file: string; env: Record<string, string> } => {
      const path = join(rig.dir, `${name}.loads`);
      return { file: path, env: { LOADS_FILE: path } };
    };
    // The SDK, exporter, instrumentations and bullmq-otel; not @opentelemetry/api alone: prom-client requires it
    // for its default process metrics (exemplars), with or without traces, as it did before traces existed.
    const otel = (path: string): string[] =>
      readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => /@opentelemetry\/(?!api\/)|bullmq-otel/.test(line));

    const workerLoads = loads('worker');
    const worker = startCli(['worker', '--processes', '1'], { ...rig.env, ...workerLoads.env }, hook);
    const importLoads = loads('import');
    const imported = startCli(['import', file, '--wait'], { ...rig.env, ...importLoads.env }, hook);
    expect(await imported.exited, imported.output()).toBe(0);
    worker.child.kill('SIGTERM');
    expect(await worker.exited, worker.output()).toBe(0);
    expect(otel(workerLoads.file)).toEqual([]);
    expect(otel(importLoads.file)).toEqual([]);
    // The check can fail: the same import with an endpoint loads the SDK.
    expect(readFileSync(importLoads.file, 'utf8')).toContain('bullmq');

    const onLoads = loads('on');
    const on = startCli(
      ['import', await rig.writeFile('one.csv', ordersCsv('ON', 1))],
      { ...rig.env, ...onLoads.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
      hook,
    );
    expect(await on.exited, on.output()).toBe(0);
    expect(otel(onLoads.file).length).toBeGreaterThan(0);
  }, 240_000);
});
