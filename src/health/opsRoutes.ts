import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Hono } from 'hono';
import type { BulkorderMetrics } from '../metrics/bulkorderMetrics.js';
import { checkReadiness, type ReadinessDeps } from './readiness.js';

/**
 * `/healthz`, `/readyz` and `/metrics`, shared by `bulkorder worker --http-port` and the
 * dashboard. `/healthz` answers from the event loop alone and never touches Redis, so a Redis
 * blip does not get every replica restarted; `/readyz` is where Redis and the token count.
 */
export function opsRoutes(deps: ReadinessDeps & { metrics: BulkorderMetrics }): Hono {
  const started = Date.now();
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  const app = new Hono();
  app.get('/healthz', (c) => {
    const delayMs = Math.round(loopDelay.max / 1e6);
    loopDelay.reset();
    return c.json({
      status: 'ok',
      uptimeSeconds: Math.round((Date.now() - started) / 1000),
      eventLoopDelayMaxMs: delayMs,
    });
  });
  app.get('/readyz', async (c) => {
    const report = await checkReadiness(deps);
    return c.json({ status: report.ready ? 'ready' : 'not ready', checks: report.checks }, report.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const { contentType, body } = await deps.metrics.render();
    return c.body(body, 200, { 'content-type': contentType });
  });
  return app;
}
