import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ExitCode, FileRefusedError, isBulkorderError } from '../errors.js';
import { httpStatusOf } from '../errorCodes.js';
import { expectResults, placeInTrail, trailPaths } from '../batches/resultsTrail.js';
import { importFile } from '../importer/importFile.js';
import { validateFile } from '../ingest/validateFile.js';
import { csvMediaType, inputDialect, outputDialect, type CsvDialect } from '../ingest/csvDialect.js';
import type { ValidationSummaryJson } from '../ingest/validationSummary.js';
import type { Caller } from './dashboardAuth.js';
import type { DashboardState, DashboardTarget, TargetKind } from './dashboardState.js';
import { h } from './html.js';
import { kindQuery, page, type PageContext } from './layout.js';
import { mappingPage, previewPage, refusedPage, uploadPage, type PreviewFacts } from './uploadPages.js';
import { mappingNeed, withoutCliAdvice, type MappingNeed } from './uploadMapping.js';
import type { Upload, UploadSpool } from './uploadSpool.js';
import { uploadNameRefusal } from './uploadName.js';

type Env = { Variables: { caller: Caller } };
/** The routes of one upload: each names it by `:id`. */
type UploadPath = `/upload/:id${string}`;

/** Where an upload stands after its check: a preview, a mapping to choose, or refused whole. */
type Checked =
  | {
      state: 'preview';
      summary: ValidationSummaryJson;
      rejectsPath: string | undefined;
      dialect: CsvDialect;
      /** The file's columns, for the mapping step the preview links to. */
      headers: string[];
      facts: PreviewFacts;
    }
  | { state: 'mapping'; need: MappingNeed; message: string }
  | { state: 'refused'; code: string; message: string };

export interface UploadRouteDeps {
  state: DashboardState;
  spool: UploadSpool;
  context(c: Context<Env>, kind: TargetKind): PageContext;
}

/** The key of a kind's saved header mapping (the mapping step's "save for the next file"). */
const savedMappingKey = (target: DashboardTarget) => `${target.services.keys.prefix}:upload-mapping`;

/** What every upload route shares: its deps, each upload's check (by upload id), and its two refusal pages. */
interface UploadKit {
  deps: UploadRouteDeps;
  /** The last check of each upload in the spool, by upload id; taken out when it is imported. */
  checks: Map<string, Checked>;
}

/**
 * Import from the browser: `/upload` (pick or drop a file), the preview of `/upload/:id` (the
 * same validation as `bulkorder validate`), the mapping step when headers do not match, and
 * Import, which queues the valid records as one batch through the same importFile as the CLI
 * and opens the batch's page. Actions only (token, form token, same origin; never --read-only).
 */
export function uploadRoutes(app: Hono<Env>, deps: UploadRouteDeps): void {
  const kit: UploadKit = { deps, checks: new Map() };
  app.get('/upload', (c) => uploadForm(kit, c));
  // The body is the file itself (streamed to the spool); the form token comes in a header (dashboardApp).
  app.post('/upload/file', (c) => receiveUpload(kit, c));
  app.get('/upload/:id', (c) => checkedPage(kit, c));
  // From the preview: every field without a column (orderRef too), and the columns left out.
  app.get('/upload/:id/mapping', (c) => mappingStep(kit, c));
  app.get('/upload/:id/rejects.csv', (c) => rejectsDownload(kit, c));
  app.post('/upload/:id/mapping', (c) => chooseMapping(kit, c));
  app.post('/upload/:id/discard', async (c) => {
    const upload = deps.spool.get(c.req.param('id'));
    if (upload !== undefined) await deps.spool.remove(upload.id);
    return c.redirect(`/upload${kindQuery(upload?.kind ?? 'orders')}`, 303);
  });
  app.post('/upload/:id/import', (c) => importUpload(kit, c));
}

/** The dashboard's target of a kind named in a query (`accounts`, else orders); undefined when not configured. */
function targetOf(state: DashboardState, kind: string | undefined): DashboardTarget | undefined {
  return kind === 'accounts' ? state.targets.accounts : state.targets.orders;
}

/** 403: a dashboard that may not act (read-only, or a caller without the right) says why. */
function refuse(kit: UploadKit, c: Context<Env>, kind: TargetKind): Response {
  return c.html(
    page(
      kit.deps.context(c, kind),
      'Import a file',
      h`<p>Importing from the browser is an action: ${kit.deps.context(c, kind).readOnlyReason ?? ''}</p>`,
    ),
    403,
  );
}

/** 404: an upload no longer in the spool (imported, discarded or expired). */
function gone(kit: UploadKit, c: Context<Env>, kind: TargetKind): Response {
  return c.html(
    page(
      kit.deps.context(c, kind),
      'Not found',
      h`<p>This upload was imported, discarded or has expired. <a href="/upload${kindQuery(kind)}">Upload a file</a></p>`,
    ),
    404,
  );
}

/**
 * Validates an upload as `bulkorder validate` would (its rejects beside it in the spool): a preview,
 * the mapping step when required columns are missing, or the file refused whole.
 */
async function checkUpload(upload: Upload, target: DashboardTarget): Promise<Checked> {
  const rejectsPath = join(dirname(upload.path), 'rejects.csv');
  try {
    const mapping = upload.mapping;
    const result = await validateFile(
      upload.path,
      { ...(mapping === undefined ? {} : { mapping }), out: rejectsPath, output: target.services.files.csv },
      target.services.kind,
    );
    const summary = result.summary.toJSON();
    // The page has a line column: the spool's path in front of each reason means nothing to the reader.
    summary.firstErrors = summary.firstErrors.map((e) => ({
      ...e,
      message: e.message.replace(`${upload.path}:${e.line}: `, '').replaceAll(upload.path, upload.name),
    }));
    return {
      state: 'preview',
      summary,
      rejectsPath: result.rejectsPath,
      dialect: outputDialect(inputDialect(result.source), target.services.files.csv),
      headers: result.source.format === 'csv' ? result.source.columns : [],
      facts: {
        ignored: result.source.ignoredColumns(),
        // The same facts as validate's, without its CLI advice: the page links its mapping step instead.
        warnings: result.source.warnings.map(withoutCliAdvice),
        mappable: result.source.format === 'csv',
      },
    };
  } catch (error) {
    if (!(error instanceof FileRefusedError)) throw error;
    const message = error.message.replaceAll(upload.path, upload.name);
    const details = error.details as { missing?: string[]; headers?: string[] } | undefined;
    if (error.code === 'COLUMNS_MISSING' && details?.missing !== undefined && details.headers !== undefined) {
      const need = mappingNeed(details.headers, upload.mapping, target.services.kind.columns);
      // The page's own words: the fields it lacks and what to do here (the CLI's --map advice is not).
      const missing = need.missing.length === 0 ? details.missing : need.missing;
      const text = `${upload.name} has no column for ${missing.join(', ')} (required). Choose below which column holds ${missing.length === 1 ? 'it' : 'each'}.`;
      return { state: 'mapping', need, message: text };
    }
    return { state: 'refused', code: error.code, message };
  }
}

/** `GET /upload`: the form to pick or drop a file. */
async function uploadForm(kit: UploadKit, c: Context<Env>): Promise<Response> {
  const target = targetOf(kit.deps.state, c.req.query('kind'));
  if (target === undefined) return gone(kit, c, 'orders');
  const ctx = kit.deps.context(c, target.kind);
  if (!ctx.canAct) return refuse(kit, c, target.kind);
  const saved = await target.services.redis.exists(savedMappingKey(target));
  return c.html(uploadPage(ctx, kit.deps.spool.maxBytes, saved === 1));
}

/** `POST /upload/file`: streams the body to the spool, checks it (with the kind's saved mapping), and names its page. */
async function receiveUpload(kit: UploadKit, c: Context<Env>): Promise<Response> {
  const { state, spool } = kit.deps;
  const target = targetOf(kit.deps.state, c.req.query('kind'));
  if (target === undefined) return c.json({ error: 'Employee accounts are not configured.' }, 404);
  const name = c.req.query('name') ?? 'upload.csv';
  const badName = uploadNameRefusal(name);
  if (badName !== undefined)
    return c.json(
      { error: `${badName.code}: ${badName.message}` },
      (httpStatusOf(badName.code) ?? 400) as ContentfulStatusCode,
    );
  let upload: Upload;
  try {
    upload = await spool.receive(c.req.raw.body, name, target.kind);
  } catch (error) {
    return receiveRefusal(kit, c, { error, name });
  }
  const saved = await target.services.redis.get(savedMappingKey(target));
  if (saved !== null) upload.mapping = JSON.parse(saved) as Record<string, string>;
  kit.checks.set(upload.id, await checkUpload(upload, target));
  state.logger.info(
    { upload: upload.id, file: upload.name, bytes: upload.bytes, by: c.get('caller').user },
    'dashboard upload',
  );
  return c.json({ next: `/upload/${encodeURIComponent(upload.id)}${kindQuery(target.kind)}` });
}

/**
 * A refusal of an upload's body as the browser's script shows it: a spool that could not write it
 * (logged), or a file refused whole; anything else is not a refusal and is thrown on.
 */
function receiveRefusal(kit: UploadKit, c: Context<Env>, failed: { error: unknown; name: string }): Response {
  const { error, name } = failed;
  if (isBulkorderError(error) && error.code === 'UPLOAD_WRITE_FAILED') {
    kit.deps.state.logger.error({ err: error, file: name }, 'dashboard upload not stored');
    return c.json(
      { error: `${error.code}: ${error.message}` },
      (httpStatusOf(error.code) ?? 507) as ContentfulStatusCode,
    );
  }
  if (!(error instanceof FileRefusedError)) throw error;
  return c.json(
    { error: `${error.code}: ${error.message} (the CLI: exit 3, file refused)` },
    // The catalogue names the status of a refusal that has its own (FILE_TOO_LARGE: 413).
    (httpStatusOf(error.code) ?? 422) as ContentfulStatusCode,
  );
}

/** `GET /upload/:id`: the upload's check as a page (preview, mapping step, or refused). */
function checkedPage(kit: UploadKit, c: Context<Env, UploadPath>): Response {
  const upload = kit.deps.spool.get(c.req.param('id'));
  const checked = upload === undefined ? undefined : kit.checks.get(upload.id);
  if (upload === undefined || checked === undefined)
    return gone(kit, c, c.req.query('kind') === 'accounts' ? 'accounts' : 'orders');
  const ctx = kit.deps.context(c, upload.kind);
  if (!ctx.canAct) return refuse(kit, c, upload.kind);
  if (checked.state === 'mapping') return c.html(mappingPage(ctx, upload, checked.need, checked.message));
  if (checked.state === 'refused')
    return c.html(refusedPage(ctx, upload.name, { code: checked.code, message: checked.message }), 422);
  return c.html(
    previewPage(ctx, upload, {
      summary: checked.summary,
      rejectsReady: checked.rejectsPath !== undefined,
      facts: checked.facts,
    }),
  );
}

/** `GET /upload/:id/mapping`: the mapping step of an upload whose preview has columns to map. */
function mappingStep(kit: UploadKit, c: Context<Env, UploadPath>): Response {
  const upload = kit.deps.spool.get(c.req.param('id'));
  const target = upload === undefined ? undefined : targetOf(kit.deps.state, upload.kind);
  const checked = upload === undefined ? undefined : kit.checks.get(upload.id);
  if (upload === undefined || target === undefined || checked === undefined)
    return gone(kit, c, c.req.query('kind') === 'accounts' ? 'accounts' : 'orders');
  const ctx = kit.deps.context(c, upload.kind);
  if (!ctx.canAct) return refuse(kit, c, upload.kind);
  if (checked.state === 'mapping') return c.html(mappingPage(ctx, upload, checked.need, checked.message));
  if (checked.state !== 'preview' || checked.headers.length === 0)
    return c.redirect(`/upload/${encodeURIComponent(upload.id)}${kindQuery(upload.kind)}`, 303);
  return c.html(mappingPage(ctx, upload, mappingNeed(checked.headers, upload.mapping, target.services.kind.columns)));
}

/** `GET /upload/:id/rejects.csv`: the rejected rows of an upload's preview, as a download. */
async function rejectsDownload(kit: UploadKit, c: Context<Env, UploadPath>): Promise<Response> {
  const upload = kit.deps.spool.get(c.req.param('id'));
  const checked = upload === undefined ? undefined : kit.checks.get(upload.id);
  if (upload === undefined || checked?.state !== 'preview' || checked.rejectsPath === undefined)
    return gone(kit, c, 'orders');
  if (!kit.deps.context(c, upload.kind).canAct) return refuse(kit, c, upload.kind);
  const name = upload.name.replace(/\.[^.]*$/, '') + '.rejects.csv';
  return c.body(new Uint8Array(await readFile(checked.rejectsPath)), 200, {
    'content-type': csvMediaType(checked.dialect),
    'content-disposition': `attachment; filename="${name}"`,
  });
}

/** `POST /upload/:id/mapping`: the columns chosen (saved for the kind when asked), and the upload checked again. */
async function chooseMapping(kit: UploadKit, c: Context<Env, UploadPath>): Promise<Response> {
  const upload = kit.deps.spool.get(c.req.param('id'));
  const target = upload === undefined ? undefined : targetOf(kit.deps.state, upload.kind);
  if (upload === undefined || target === undefined) return gone(kit, c, 'orders');
  const form = await c.req.parseBody();
  const chosen: Record<string, string> = { ...upload.mapping };
  for (const [name, value] of Object.entries(form)) {
    if (name.startsWith('map:') && typeof value === 'string' && value !== '') chosen[value] = name.slice('map:'.length);
  }
  upload.mapping = chosen;
  if (form.save === 'yes') await target.services.redis.set(savedMappingKey(target), JSON.stringify(chosen));
  kit.checks.set(upload.id, await checkUpload(upload, target));
  return c.redirect(`/upload/${encodeURIComponent(upload.id)}${kindQuery(upload.kind)}`, 303);
}

/**
 * `POST /upload/:id/import`: the upload moved into its trail and imported through importFile as one
 * batch, then the batch's page; a refusal shows the refused page. The spool forgets it either way.
 */
async function importUpload(kit: UploadKit, c: Context<Env, UploadPath>): Promise<Response> {
  const { state, spool } = kit.deps;
  const upload = spool.get(c.req.param('id'));
  const target = upload === undefined ? undefined : targetOf(kit.deps.state, upload.kind);
  const checked = upload === undefined ? undefined : kit.checks.get(upload.id);
  if (upload === undefined || target === undefined || checked?.state !== 'preview') return gone(kit, c, 'orders');
  // Taken from the spool first: a second click (or a replayed form) finds nothing to import.
  kit.checks.delete(upload.id);
  const by = c.get('caller').user;
  // The upload's trail: the file as imported, its rejects and (once settled) its results, kept under
  // BULKORDER_RESULTS_DIR where the batch's page serves them, long after the spool is gone.
  const trail = trailPaths(target.services.files.resultsDir, 'uploads', upload.name);
  try {
    await placeInTrail(upload.path, trail, 'move');
    const ingest = upload.mapping === undefined ? {} : { mapping: upload.mapping };
    const result = await importFile(
      trail.input,
      { ...ingest, rejectsPath: trail.rejects },
      target.services.pipeline(state.logger.child({ upload: upload.id, by })),
    );
    await expectResults(target.services.batches, result.batchId, {
      input: trail.input,
      results: trail.results,
      ingest,
    });
    state.logger.info(
      {
        upload: upload.id,
        file: upload.name,
        batchId: result.batchId,
        queued: result.counts,
        trail: trail.input,
        by,
      },
      'dashboard import',
    );
    return c.redirect(`/batches/${encodeURIComponent(result.batchId)}${kindQuery(upload.kind)}`, 303);
  } catch (error) {
    if (!isBulkorderError(error)) throw error;
    // Refused as a whole (nothing queued): no trail to keep.
    if (error.exitCode === ExitCode.usage || error.exitCode === ExitCode.fileRefused)
      await Promise.all([trail.input, trail.rejects].map((path) => rm(path, { force: true })));
    return c.html(
      refusedPage(kit.deps.context(c, upload.kind), upload.name, {
        code: error.code,
        message: error.message.replaceAll(trail.input, upload.name).replaceAll(upload.path, upload.name),
        exitCode: error.exitCode,
      }),
      error.exitCode === ExitCode.fileRefused ? 422 : 500,
    );
  } finally {
    await spool.remove(upload.id);
  }
}
