import { readFile } from 'node:fs/promises';
import { Hono, type Context } from 'hono';
import { isBulkorderError } from '../errors.js';
import { parkedFilterFromFlags } from '../deadLetter/parkedFilter.js';
import { createMetrics } from '../metrics/bulkorderMetrics.js';
import { opsRoutes } from '../health/opsRoutes.js';
import { DashboardAuth, sameOrigin, type Caller } from './dashboardAuth.js';
import { HostCheck } from './hostCheck.js';
import { dashboardSnapshot, type DashboardState, type DashboardTarget, type TargetKind } from './dashboardState.js';
import { exportCsv, purgeConfirmPage, runAction, type ActionForm } from './dashboardActions.js';
import { batchFiles, batchPage, batchesPage } from './batchPages.js';
import { kindQuery, page, time, type PageContext } from './layout.js';
import { watchRedis } from './redisWatch.js';
import { formatAge } from '../deadLetter/formatParked.js';
import { h } from './html.js';
import { overviewPage } from './overviewPage.js';
import { orderPage, parkedListPage, type FilterFields } from './parkedPages.js';
import { schedulesPage, searchPage } from './searchPages.js';
import { uploadRoutes } from './uploadRoutes.js';
import { UploadSpool } from './uploadSpool.js';

export interface DashboardOptions {
  /** Hide and refuse every action. */
  readOnly: boolean;
  /** The Host names answered (DNS rebinding); the probes' paths answer any. Default: loopback and the configured ones. */
  hosts?: HostCheck;
  /** Marks the process as shutting down, for /readyz. */
  shuttingDown(): boolean;
  /** Where uploads wait for their preview and Import; default a spool of its own (close it to remove its files). */
  spool?: UploadSpool;
}

type Env = { Variables: { caller: Caller } };

// Probes only: they say whether the process and Redis are fit, nothing about orders. /metrics names
// batches' states and error codes, so it needs the token like every page (README: Dashboard).
const OPEN_PATHS = new Set(['/healthz', '/readyz']);

/**
 * The dashboard: server-rendered pages over the same stores and actions as the CLI. With
 * BULKORDER_DASHBOARD_TOKEN set every page needs it (bearer, or basic-auth password); actions
 * additionally need a form token of this process and a same-origin request. Without a token,
 * or with --read-only, no action is shown or accepted.
 */
export function dashboardApp(state: DashboardState, options: DashboardOptions): Hono<Env> {
  const auth = new DashboardAuth(state.config.dashboard.token);
  const hosts =
    options.hosts ??
    new HostCheck({
      listenHost: '127.0.0.1',
      publicUrl: state.config.dashboard.publicUrl,
      hosts: state.config.dashboard.hosts,
    });
  const app = new Hono<Env>();
  const redis = watchRedis(Object.values(state.targets).map((target) => target.services.redis));
  const metrics = createMetrics({ snapshot: () => dashboardSnapshot(state) });

  app.use('*', async (c, next) => {
    if (OPEN_PATHS.has(c.req.path)) return next();
    // Without a Host header (in-process requests), the URL's host: a browser, the rebinding attacker's tool, always sends one.
    if (!hosts.allows(c.req.header('host') ?? new URL(c.req.url).host)) {
      return c.text(
        'Misdirected request: this dashboard does not serve that host name (add it to BULKORDER_DASHBOARD_HOSTS if it is yours).',
        421,
      );
    }
    const caller = auth.caller(c.req.header('authorization'));
    if (auth.configured && !caller.authenticated) {
      return c.text(
        'Authentication required: the dashboard token (BULKORDER_DASHBOARD_TOKEN) as bearer token or basic-auth password.',
        401,
        { 'www-authenticate': 'Basic realm="bulkorder", charset="UTF-8"' },
      );
    }
    c.set('caller', caller);
    c.header('x-frame-options', 'DENY');
    c.header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'",
    );
    c.header('referrer-policy', 'same-origin');
    c.header('cache-control', 'no-store');
    if (c.req.method === 'POST') {
      if (options.readOnly) return c.text('Refused: the dashboard runs with --read-only.', 403);
      if (!auth.configured || !caller.authenticated)
        return c.text('Refused: actions need BULKORDER_DASHBOARD_TOKEN.', 401);
      if (!sameOrigin(c.req.header('origin'), c.req.header('host')))
        return c.text('Refused: cross-origin request.', 403);
      // An upload's body is the file itself, streamed to the spool: its form token comes in a header.
      const given =
        c.req.path === '/upload/file'
          ? c.req.header('x-bulkorder-form-token')
          : one((await c.req.parseBody({ all: true }))._csrf);
      if (!auth.checkFormToken(caller, given))
        return c.text('Refused: missing or stale form token; reload the page and try again.', 403);
    }
    return next();
  });

  // After the token check: /metrics needs it, the probes pass through it (OPEN_PATHS).
  app.route(
    '/',
    opsRoutes({
      redis: state.targets.orders.services.redis,
      redisUrl: state.config.redisUrl,
      metrics,
      shuttingDown: options.shuttingDown,
    }),
  );

  const context = (c: Context<Env>, kind: TargetKind): PageContext => {
    const caller = c.get('caller');
    const canAct = !options.readOnly && auth.configured && caller.authenticated;
    const flash = c.req.query('flash');
    return {
      env: state.config.env,
      apiUrl: state.config.baseUrl,
      canAct,
      readOnlyReason: canAct
        ? undefined
        : options.readOnly
          ? 'started with --read-only.'
          : 'set BULKORDER_DASHBOARD_TOKEN to allow actions.',
      caller,
      csrf: auth.formToken(caller),
      kind,
      hasAccounts: state.targets.accounts !== undefined,
      ...(flash === undefined ? {} : { flash }),
    };
  };
  // While Redis is away every page would fail: say so, and let the browser ask again until it is back.
  const redisDown = (c: Context<Env>, since: number) =>
    c.html(
      page(
        context(c, kindOf(c)),
        'Redis unreachable',
        h`<div class="breaker" data-test="redis-down"><strong>Redis at ${state.config.redisUrl.toString()} unreachable since ${time(since)}</strong>
(${formatAge(Date.now() - since)}). The dashboard reconnects on its own; this page reloads every 5 s. Workers wait for Redis too: nothing is lost meanwhile.</div>`,
        { refreshSeconds: 5 },
      ),
      503,
      { 'retry-after': '5' },
    );
  app.use('*', async (c, next) => {
    const since = OPEN_PATHS.has(c.req.path) || c.req.path === '/metrics' ? undefined : redis.downSince();
    // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- hono types a '*' route's input as any
    return since === undefined ? next() : redisDown(c, since);
  });
  const targetOf = (kind: string | undefined): DashboardTarget | undefined =>
    kind === 'accounts' ? state.targets.accounts : state.targets.orders;
  const kindOf = (c: Context<Env>): TargetKind => (c.req.query('kind') === 'accounts' ? 'accounts' : 'orders');
  const notFound = (c: Context<Env>, what: string) =>
    c.html(page(context(c, kindOf(c)), 'Not found', h`<p>${what}</p>`), 404);
  const filterFields = (c: Context<Env>): FilterFields =>
    pick(c.req.query(), ['batch', 'status', 'code', 'olderThan', 'newerThan', 'cause']);

  uploadRoutes(app, { state, spool: options.spool ?? new UploadSpool(state.config.dashboard.uploadMaxBytes), context });
  app.get('/', async (c) =>
    c.html(await overviewPage(state, context(c, state.targets[kindOf(c)] === undefined ? 'orders' : kindOf(c)))),
  );
  app.get('/batches', async (c) => {
    const target = targetOf(c.req.query('kind'));
    return target === undefined
      ? notFound(c, 'Employee accounts are not configured.')
      : c.html(await batchesPage(target, context(c, target.kind), c.req.query('after')));
  });
  app.get('/batches/:id', async (c) => {
    const target = targetOf(c.req.query('kind'));
    const batch = await target?.services.batches.get(c.req.param('id'));
    if (target === undefined || batch === undefined) return notFound(c, `No batch ${c.req.param('id')}.`);
    return c.html(await batchPage(target, context(c, target.kind), batch));
  });
  app.get('/batches/:id/:file{(results|rejects)\\.csv}', async (c) => {
    const batch = await targetOf(c.req.query('kind'))?.services.batches.get(c.req.param('id'));
    const files = batch === undefined ? {} : await batchFiles(batch);
    const path = c.req.param('file') === 'results.csv' ? files.results : files.rejects;
    if (path === undefined) return notFound(c, 'That file is not on this host.');
    return c.body(await readFile(path), 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${c.req.param('id')}.${c.req.param('file')}"`,
    });
  });
  app.get('/search', async (c) =>
    c.html(await searchPage(state, context(c, 'orders'), (c.req.query('q') ?? '').trim())),
  );
  app.get('/orders/:key', async (c) => {
    const target = targetOf(c.req.query('kind'));
    const html =
      target === undefined ? undefined : await orderPage(target, context(c, target.kind), c.req.param('key'));
    return html === undefined ? notFound(c, `No order ${c.req.param('key')}.`) : c.html(html);
  });
  app.get('/schedules', async (c) => c.html(await schedulesPage(state, context(c, 'orders'))));
  for (const [path, which] of [
    ['/dead-letters', 'dead'],
    ['/held', 'held'],
  ] as const) {
    app.get(path, async (c) => {
      const target = targetOf(c.req.query('kind'));
      if (target === undefined) return notFound(c, 'Employee accounts are not configured.');
      const fields = filterFields(c);
      try {
        return c.html(
          await parkedListPage(
            target,
            context(c, target.kind),
            which,
            parkedFilterFromFlags(fields),
            fields,
            c.req.query('after'),
          ),
        );
      } catch (error) {
        if (!isBulkorderError(error)) throw error;
        return c.html(
          page(
            { ...context(c, target.kind), flash: error.message },
            'Filter refused',
            h`<p><a href="${path}${kindQuery(target.kind)}">back</a></p>`,
          ),
          400,
        );
      }
    });
  }
  app.get('/dead-letters/export.csv', async (c) => {
    const target = targetOf(c.req.query('kind'));
    if (target === undefined) return notFound(c, 'Employee accounts are not configured.');
    const exported = await exportCsv(target, parkedFilterFromFlags(filterFields(c)), Number(c.req.query('part') ?? 1));
    if (exported === undefined) return notFound(c, 'No dead letters match: nothing to export.');
    return c.body(new Uint8Array(exported.csv), 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': 'attachment; filename="dead-letters.csv"',
      'x-bulkorder-parts': String(exported.parts),
    });
  });
  for (const path of ['/dead-letters/action', '/held/action']) {
    app.post(path, async (c) => {
      const body = await c.req.parseBody({ all: true });
      const target = targetOf(one(body.kind));
      if (target === undefined) return notFound(c, 'Employee accounts are not configured.');
      const form: ActionForm = {
        ...pick(Object.fromEntries(Object.entries(body).map(([k, v]) => [k, one(v)])), [
          'batch',
          'status',
          'code',
          'olderThan',
          'newerThan',
          'cause',
          'note',
          'remoteId',
        ]),
        action: one(body.action) ?? '',
        keys: all(body.keys),
        by: one(body.by)?.trim() || c.get('caller').user,
      };
      if (form.action.startsWith('purge-') && one(body.confirm) !== 'yes') {
        // Purging cannot be undone: a page of its own says what goes and asks again.
        return c.html(await purgeConfirmPage(target, context(c, target.kind), form));
      }
      let message: string;
      try {
        message = await runAction(target, form);
      } catch (error) {
        if (!isBulkorderError(error)) throw error;
        message = `Refused: ${error.message}`;
      }
      state.logger.info(
        { action: form.action, selected: form.keys.length, by: form.by, kind: target.kind },
        'dashboard action',
      );
      const back = path === '/dead-letters/action' ? '/dead-letters' : '/held';
      return c.redirect(
        `${back}?${new URLSearchParams({ ...(target.kind === 'accounts' ? { kind: 'accounts' } : {}), flash: message }).toString()}`,
        303,
      );
    });
  }
  app.onError(async (error, c) => {
    const since = await redis.confirmDown();
    if (since !== undefined) return redisDown(c, since);
    state.logger.error({ err: error, path: c.req.path }, 'dashboard request failed');
    const message = isBulkorderError(error)
      ? `${error.code}: ${error.message}`
      : 'Internal error (see the dashboard log).';
    return c.text(message, isBulkorderError(error) && error.exitCode === 5 ? 503 : 500);
  });
  return app;
}

type FormValue = string | File | (string | File)[] | undefined;

function one(value: FormValue): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

function all(value: FormValue): string[] {
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(
    (v): v is string => typeof v === 'string' && v !== '',
  );
}

function pick<K extends string>(
  from: Record<string, string | undefined>,
  names: readonly K[],
): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const name of names) {
    const value = from[name]?.trim();
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}
