import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Context, Hono } from 'hono';
import { FileRefusedError, isBulkorderError } from '../errors.js';
import { importFile } from '../importer/importFile.js';
import { validateFile } from '../ingest/validateFile.js';
import type { ValidationSummaryJson } from '../ingest/validationSummary.js';
import type { Caller } from './dashboardAuth.js';
import type { DashboardState, DashboardTarget, TargetKind } from './dashboardState.js';
import { h } from './html.js';
import { kindQuery, page, type PageContext } from './layout.js';
import { mappingPage, previewPage, refusedPage, uploadPage, type MappingNeed } from './uploadPages.js';
import type { Upload, UploadSpool } from './uploadSpool.js';

type Env = { Variables: { caller: Caller } };

/** Where an upload stands after its check: a preview, a mapping to choose, or refused whole. */
type Checked =
  | { state: 'preview'; summary: ValidationSummaryJson; rejectsPath: string | undefined }
  | { state: 'mapping'; need: MappingNeed; message: string }
  | { state: 'refused'; code: string; message: string };

export interface UploadRouteDeps {
  state: DashboardState;
  spool: UploadSpool;
  context(c: Context<Env>, kind: TargetKind): PageContext;
}

/** The key of a kind's saved header mapping (the mapping step's "save for the next file"). */
const savedMappingKey = (target: DashboardTarget) => `${target.services.keys.prefix}:upload-mapping`;

/**
 * Import from the browser: `/upload` (pick or drop a file), the preview of `/upload/:id` (the
 * same validation as `bulkorder validate`), the mapping step when headers do not match, and
 * Import, which queues the valid records as one batch through the same importFile as the CLI
 * and opens the batch's page. Actions only (token, form token, same origin; never --read-only).
 */
export function uploadRoutes(app: Hono<Env>, deps: UploadRouteDeps): void {
  const { state, spool } = deps;
  const checks = new Map<string, Checked>();
  const targetOf = (kind: string | undefined): DashboardTarget | undefined =>
    kind === 'accounts' ? state.targets.accounts : state.targets.orders;
  const refuse = (c: Context<Env>, kind: TargetKind) =>
    c.html(
      page(
        deps.context(c, kind),
        'Import a file',
        h`<p>Importing from the browser is an action: ${deps.context(c, kind).readOnlyReason ?? ''}</p>`,
      ),
      403,
    );
  const gone = (c: Context<Env>, kind: TargetKind) =>
    c.html(
      page(
        deps.context(c, kind),
        'Not found',
        h`<p>This upload was imported, discarded or has expired. <a href="/upload${kindQuery(kind)}">Upload a file</a></p>`,
      ),
      404,
    );

  const check = async (upload: Upload, target: DashboardTarget): Promise<Checked> => {
    const rejectsPath = join(dirname(upload.path), 'rejects.csv');
    try {
      const mapping = upload.mapping;
      const result = await validateFile(
        upload.path,
        { ...(mapping === undefined ? {} : { mapping }), out: rejectsPath },
        target.services.kind,
      );
      const summary = result.summary.toJSON();
      // The page has a line column: the spool's path in front of each reason means nothing to the reader.
      summary.firstErrors = summary.firstErrors.map((e) => ({
        ...e,
        message: e.message.replace(`${upload.path}:${e.line}: `, '').replaceAll(upload.path, upload.name),
      }));
      return { state: 'preview', summary, rejectsPath: result.rejectsPath };
    } catch (error) {
      if (!(error instanceof FileRefusedError)) throw error;
      const message = error.message.replaceAll(upload.path, upload.name);
      const details = error.details as
        { missing?: string[]; headers?: string[]; suggestions?: Record<string, string> } | undefined;
      if (error.code === 'COLUMNS_MISSING' && details?.missing !== undefined && details.headers !== undefined) {
        const need = {
          missing: details.missing,
          headers: details.headers,
          suggestions: details.suggestions ?? {},
          fields: target.services.kind.columns.fields,
        };
        return { state: 'mapping', need, message };
      }
      return { state: 'refused', code: error.code, message };
    }
  };

  app.get('/upload', async (c) => {
    const target = targetOf(c.req.query('kind'));
    if (target === undefined) return gone(c, 'orders');
    const ctx = deps.context(c, target.kind);
    if (!ctx.canAct) return refuse(c, target.kind);
    const saved = await target.services.redis.exists(savedMappingKey(target));
    return c.html(uploadPage(ctx, spool.maxBytes, saved === 1));
  });

  // The body is the file itself (streamed to the spool); the form token comes in a header (dashboardApp).
  app.post('/upload/file', async (c) => {
    const target = targetOf(c.req.query('kind'));
    if (target === undefined) return c.json({ error: 'Employee accounts are not configured.' }, 404);
    let upload: Upload;
    try {
      upload = await spool.receive(c.req.raw.body, c.req.query('name') ?? 'upload.csv', target.kind);
    } catch (error) {
      if (!(error instanceof FileRefusedError)) throw error;
      return c.json(
        { error: `${error.code}: ${error.message} (the CLI: exit 3, file refused)` },
        error.code === 'FILE_TOO_LARGE' ? 413 : 422,
      );
    }
    const saved = await target.services.redis.get(savedMappingKey(target));
    if (saved !== null) upload.mapping = JSON.parse(saved) as Record<string, string>;
    checks.set(upload.id, await check(upload, target));
    state.logger.info(
      { upload: upload.id, file: upload.name, bytes: upload.bytes, by: c.get('caller').user },
      'dashboard upload',
    );
    return c.json({ next: `/upload/${encodeURIComponent(upload.id)}${kindQuery(target.kind)}` });
  });

  app.get('/upload/:id', (c) => {
    const upload = spool.get(c.req.param('id'));
    const checked = upload === undefined ? undefined : checks.get(upload.id);
    if (upload === undefined || checked === undefined)
      return gone(c, c.req.query('kind') === 'accounts' ? 'accounts' : 'orders');
    const ctx = deps.context(c, upload.kind);
    if (!ctx.canAct) return refuse(c, upload.kind);
    if (checked.state === 'mapping') return c.html(mappingPage(ctx, upload, checked.need, checked.message));
    if (checked.state === 'refused') return c.html(refusedPage(ctx, upload.name, checked.code, checked.message), 422);
    return c.html(previewPage(ctx, upload, checked.summary, checked.rejectsPath !== undefined));
  });

  app.get('/upload/:id/rejects.csv', async (c) => {
    const upload = spool.get(c.req.param('id'));
    const checked = upload === undefined ? undefined : checks.get(upload.id);
    if (upload === undefined || checked?.state !== 'preview' || checked.rejectsPath === undefined)
      return gone(c, 'orders');
    if (!deps.context(c, upload.kind).canAct) return refuse(c, upload.kind);
    const name = upload.name.replace(/\.[^.]*$/, '') + '.rejects.csv';
    return c.body(new Uint8Array(await readFile(checked.rejectsPath)), 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${name}"`,
    });
  });

  app.post('/upload/:id/mapping', async (c) => {
    const upload = spool.get(c.req.param('id'));
    const target = upload === undefined ? undefined : targetOf(upload.kind);
    if (upload === undefined || target === undefined) return gone(c, 'orders');
    const form = await c.req.parseBody();
    const chosen: Record<string, string> = { ...upload.mapping };
    for (const [name, value] of Object.entries(form)) {
      if (name.startsWith('map:') && typeof value === 'string' && value !== '')
        chosen[value] = name.slice('map:'.length);
    }
    upload.mapping = chosen;
    if (form.save === 'yes') await target.services.redis.set(savedMappingKey(target), JSON.stringify(chosen));
    checks.set(upload.id, await check(upload, target));
    return c.redirect(`/upload/${encodeURIComponent(upload.id)}${kindQuery(upload.kind)}`, 303);
  });

  app.post('/upload/:id/discard', async (c) => {
    const upload = spool.get(c.req.param('id'));
    if (upload !== undefined) await spool.remove(upload.id);
    return c.redirect(`/upload${kindQuery(upload?.kind ?? 'orders')}`, 303);
  });

  app.post('/upload/:id/import', async (c) => {
    const upload = spool.get(c.req.param('id'));
    const target = upload === undefined ? undefined : targetOf(upload.kind);
    const checked = upload === undefined ? undefined : checks.get(upload.id);
    if (upload === undefined || target === undefined || checked?.state !== 'preview') return gone(c, 'orders');
    // Taken from the spool first: a second click (or a replayed form) finds nothing to import.
    checks.delete(upload.id);
    const by = c.get('caller').user;
    try {
      const mapping = upload.mapping;
      const result = await importFile(
        upload.path,
        { ...(mapping === undefined ? {} : { mapping }), rejectsPath: join(dirname(upload.path), 'rejects.csv') },
        target.services.pipeline(state.logger.child({ upload: upload.id, by })),
      );
      state.logger.info(
        { upload: upload.id, file: upload.name, batchId: result.batchId, queued: result.counts, by },
        'dashboard import',
      );
      return c.redirect(`/batches/${encodeURIComponent(result.batchId)}${kindQuery(upload.kind)}`, 303);
    } catch (error) {
      if (!isBulkorderError(error)) throw error;
      return c.html(
        refusedPage(
          deps.context(c, upload.kind),
          upload.name,
          error.code,
          error.message.replaceAll(upload.path, upload.name),
        ),
        422,
      );
    } finally {
      await spool.remove(upload.id);
    }
  });
}
