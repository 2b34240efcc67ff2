import { basename } from 'node:path';
import { readFile } from 'node:fs/promises';
import { Hono, type Context } from 'hono';
import { isBulkorderError } from '../errors.js';
import { csvMediaType, DEFAULT_DIALECT, outputDialect } from '../ingest/csvDialect.js';
import { noPermissionReply } from '../redisErrors.js';
import { parkedFilterFromFlags } from '../deadLetter/parkedFilter.js';
import { createMetrics } from '../metrics/bulkorderMetrics.js';
import { opsRoutes } from '../health/opsRoutes.js';
import { BOARD_PATH, queueBoard } from './queueBoard.js';
import { accessGuard, boardGuard, one, OPEN_PATHS, type DashboardEnv } from './dashboardGuards.js';
import { DashboardAuth } from './dashboardAuth.js';
import { HostCheck } from './hostCheck.js';
import { dashboardSnapshot, type DashboardState, type DashboardTarget, type TargetKind } from './dashboardState.js';
import {
  acknowledgeDuplicatesForm,
  exportCsv,
  purgeConfirmPage,
  runAction,
  type ActionForm,
} from './dashboardActions.js';
import { actOnBatchForm, batchFiles, batchPage, batchesPage } from './batchPages.js';
import { kindQuery, page, time, type PageContext } from './layout.js';
import { watchRedis } from './redisWatch.js';
import { formatAge } from '../deadLetter/formatParked.js';
import { h } from './html.js';
import { overviewPage } from './overviewPage.js';
import { acknowledgeOpen, openPage } from './openPage.js';
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

type Env = DashboardEnv;

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

  app.use('*', accessGuard({ auth, hosts, readOnly: options.readOnly }));
  // Bull Board's raw view of the jobs: behind the token and Host check above; its actions as queueBoard.ts says.
  app.use(`${BOARD_PATH}/*`, boardGuard({ auth, readOnly: options.readOnly }));
  const queues = Object.values(state.targets).map((target) => target.services.queue);
  app.route(BOARD_PATH, queueBoard(queues, options.readOnly || !auth.configured));

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

  const context = pageContextOf(state, auth, options.readOnly);
  // While Redis is away every page would fail: say so, and let the browser ask again until it is back.
  const redisDown = (c: Context<Env>, since: number) =>
    c.html(
      page(
        context(c, kindOf(c)),
        'Redis unreachable',
        h`<div class="breaker" data-test="redis-down"><strong>Redis at ${state.config.redisUrl.toString()} unreachable since ${time(since, state.config.timeZone)}</strong>
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
  const pages: Pages = { state, context, targetOf, notFound, filterFields };
  pageRoutes(app, pages);
  openRoutes(app, pages);
  parkedRoutes(app, pages);
  app.onError(async (error, c) => {
    const since = await redis.confirmDown();
    if (since !== undefined) return redisDown(c, since);
    state.logger.error({ err: error, path: c.req.path }, 'dashboard request failed');
    const noPermission = noPermissionReply(error);
    // A file the server's disk refused (src/files/): 507, named by its last part only (no server paths in answers).
    const refusedPath =
      isBulkorderError(error) && typeof error.details?.path === 'string' ? error.details.path : undefined;
    if (refusedPath !== undefined && isBulkorderError(error) && error.exitCode === 5)
      return c.text(`${error.code}: ${error.message.replaceAll(refusedPath, basename(refusedPath))}`, 507);
    const message = isBulkorderError(error) ? `${error.code}: ${error.message}` : unexpectedErrorText(noPermission);
    return c.text(message, isBulkorderError(error) && error.exitCode === 5 ? 503 : 500);
  });
  return app;
}

/** How a request becomes a page's context: the environment, the caller, whether they may act and why not. */
function pageContextOf(
  state: DashboardState,
  auth: DashboardAuth,
  readOnly: boolean,
): (c: Context<Env>, kind: TargetKind) => PageContext {
  return (c: Context<Env>, kind: TargetKind): PageContext => {
    const caller = c.get('caller');
    const canAct = !readOnly && auth.configured && caller.authenticated;
    const flash = c.req.query('flash');
    return {
      env: state.config.env,
      apiUrl: state.config.baseUrl,
      canAct,
      readOnlyReason: canAct ? undefined : readOnlyReason(readOnly),
      caller,
      csrf: auth.formToken(caller),
      kind,
      hasAccounts: state.targets.accounts !== undefined,
      timeZone: state.config.timeZone,
      ...(flash === undefined ? {} : { flash }),
    };
  };
}

/** What the page routes share: the dashboard's state and how a request becomes a page. */
interface Pages {
  state: DashboardState;
  /** The page context of a request for one kind (orders or accounts). */
  context: (c: Context<Env>, kind: TargetKind) => PageContext;
  /** The target of `?kind=`; undefined when accounts are asked for and not configured. */
  targetOf: (kind: string | undefined) => DashboardTarget | undefined;
  notFound: (c: Context<Env>, what: string) => Response | Promise<Response>;
  /** The filter fields of the query string. */
  filterFields: (c: Context<Env>) => FilterFields;
}

/** The overview, batches, search, an order and schedules. */
function pageRoutes(app: Hono<Env>, { state, context, targetOf, notFound }: Pages): void {
  const kindOf = (c: Context<Env>): TargetKind => (c.req.query('kind') === 'accounts' ? 'accounts' : 'orders');
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
  app.post('/batches/:id/circuit', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const target = targetOf(one(body.kind));
    const batchId = c.req.param('id');
    if (target === undefined || (await target.services.batches.get(batchId)) === undefined)
      return notFound(c, `No batch ${batchId}.`);
    const by = one(body.by)?.trim() || c.get('caller').user;
    const message = await actOnBatchForm(target, batchId, { action: one(body.action), why: one(body.why), by });
    state.logger.info(
      { action: `batch ${one(body.action) ?? ''}`, batchId, by, kind: target.kind },
      'dashboard action',
    );
    return c.redirect(
      `/batches/${encodeURIComponent(batchId)}?${new URLSearchParams({ ...(target.kind === 'accounts' ? { kind: 'accounts' } : {}), flash: message }).toString()}`,
      303,
    );
  });
  app.get('/batches/:id/:file{(results|rejects)\\.csv}', async (c) => {
    const batch = await targetOf(c.req.query('kind'))?.services.batches.get(c.req.param('id'));
    const files = batch === undefined ? {} : await batchFiles(batch);
    const path = c.req.param('file') === 'results.csv' ? files.results : files.rejects;
    if (path === undefined) return notFound(c, 'That file is not on this host.');
    return c.body(await readFile(path), 200, {
      'content-type': csvMediaType(outputDialect(batch?.dialect ?? DEFAULT_DIALECT, state.config.files.csv)),
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
}

/** "Needs a person": what is open, and acknowledging it (ticked items, or possible duplicates in bulk). */
function openRoutes(app: Hono<Env>, { state, context, targetOf, notFound }: Pages): void {
  const back = (kind: TargetKind, message: string) =>
    `/open?${new URLSearchParams({ ...(kind === 'accounts' ? { kind: 'accounts' } : {}), flash: message }).toString()}`;
  app.get('/open', async (c) => {
    const target = targetOf(c.req.query('kind'));
    return target === undefined
      ? notFound(c, 'Employee accounts are not configured.')
      : c.html(await openPage(target, context(c, target.kind)));
  });
  app.post('/open/ack', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const target = targetOf(one(body.kind));
    if (target === undefined) return notFound(c, 'Employee accounts are not configured.');
    const by = one(body.by)?.trim() || c.get('caller').user;
    const message = await acknowledgeOpen(target, { ids: all(body.ids), note: one(body.note), by });
    state.logger.info(
      { action: 'open ack', selected: all(body.ids).length, by, kind: target.kind },
      'dashboard action',
    );
    return c.redirect(back(target.kind, message), 303);
  });
  app.post('/open/duplicates/ack', async (c) => {
    const body = await c.req.parseBody({ all: true });
    const target = targetOf(one(body.kind));
    if (target === undefined) return notFound(c, 'Employee accounts are not configured.');
    const by = one(body.by)?.trim() || c.get('caller').user;
    const batch = one(body.batch)?.trim();
    const until = Number(one(body.until));
    const message = await acknowledgeDuplicatesForm(target, {
      by,
      why: one(body.why),
      ...(batch === undefined ? {} : { batch }),
      ...(Number.isFinite(until) ? { until } : {}),
    });
    state.logger.info({ action: 'duplicates ack', batch, by, kind: target.kind }, 'dashboard action');
    return c.redirect(back(target.kind, message), 303);
  });
}

/** The dead letters and held records: their lists, the export, and the actions on them. */
function parkedRoutes(app: Hono<Env>, { state, context, targetOf, notFound, filterFields }: Pages): void {
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
          await parkedListPage(target, context(c, target.kind), which, {
            filter: parkedFilterFromFlags(fields),
            fields,
            after: c.req.query('after'),
          }),
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
      'content-type': csvMediaType(exported.dialect),
      'content-disposition': 'attachment; filename="dead-letters.csv"',
      'x-bulkorder-parts': String(exported.parts),
    });
  });
  for (const path of ['/dead-letters/action', '/held/action']) {
    app.post(path, async (c) => {
      const body = await c.req.parseBody({ all: true });
      const target = targetOf(one(body.kind));
      if (target === undefined) return notFound(c, 'Employee accounts are not configured.');
      const form = actionForm(body, c.get('caller').user);
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
}

/** The action form of a dead-letter or held page, as posted; `by` defaults to the caller. */
function actionForm(body: Record<string, FormValue>, caller: string): ActionForm {
  return {
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
    by: one(body.by)?.trim() || caller,
  };
}

type FormValue = string | File | (string | File)[] | undefined;

function all(value: FormValue): string[] {
  const values = value === undefined ? [] : [value];
  return (Array.isArray(value) ? value : values).filter((v): v is string => typeof v === 'string' && v !== '');
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

function readOnlyReason(readOnly: boolean): string {
  return readOnly ? 'started with --read-only.' : 'set BULKORDER_DASHBOARD_TOKEN to allow actions.';
}

/** The answer to an error that is not bulkorder's own: a Redis ACL refusal named, anything else logged. */
function unexpectedErrorText(noPermission: string | undefined): string {
  if (noPermission === undefined) return 'Internal error (see the dashboard log).';
  return `REDIS_NO_PERMISSION: Redis refused a command or key to the user of REDIS_URL (${noPermission}); give it the ACL of README's "Redis permissions".`;
}
