import type { Config } from '../config.js';
import { UsageError } from '../errors.js';
import { ingestOptionsFromFlags, type IngestFlags } from '../ingest/ingestFlags.js';
import type { RecordKind } from '../kinds/recordKind.js';
import type { Logger } from '../logger.js';
import { openServices } from '../services.js';
import { importAndFollow, type FollowSettings } from './importAndFollow.js';
import type { ImportOptions } from './importFile.js';

/** What `import` and `accounts import` take besides the file (their flags, already parsed by commander). */
export interface ImportRequest extends IngestFlags {
  wait?: boolean;
  force?: boolean;
  rejects?: string;
  results?: string;
  /** --max-wait; --timeout is its alias. */
  maxWait?: string;
  timeout?: string;
}

/** `--wait` gives up after this by default (--max-wait): a nightly cron job must end. */
const DEFAULT_MAX_WAIT_MS = 6 * 3600 * 1000;

/**
 * `bulkorder import` and `bulkorder accounts import`: imports (and with --wait follows) one file
 * of the kind; returns the report (text and JSON) and the exit code for the command to print.
 */
export async function runImport<P>(file: string, request: ImportRequest, ctx: { config: Config; logger: Logger }, kind: RecordKind<P>): Promise<{ text: string; json: Record<string, unknown>; exitCode: number }> {
  const services = await openServices(ctx.config, kind);
  try {
    if (kind.name === 'accounts' && ctx.config.credentials.cafetariaplan === undefined) {
      // Importing needs no credentials, but only a worker that has them registers accounts.
      process.stderr.write('note: no Cafetariaplan credentials here (BULKORDER_CAFETARIAPLAN_CLIENT_ID/_SECRET): accounts are queued, and a `bulkorder worker` that has them registers them.\n');
    }
    const outcome = await importAndFollow(file, await importOptionsFrom(request, kind), services, ctx.logger, followFrom(request));
    return { text: outcome.report, json: outcome.json, exitCode: outcome.exitCode };
  } finally {
    await services.close();
  }
}

/** ImportOptions from the request; --map is checked against the kind's fields. */
async function importOptionsFrom<P>(request: ImportRequest, kind: RecordKind<P>): Promise<ImportOptions> {
  return {
    ...(await ingestOptionsFromFlags(request, kind.columns)),
    force: request.force === true,
    ...(request.rejects === undefined ? {} : { rejectsPath: request.rejects }),
  };
}

/** FollowSettings from --wait, --results and --max-wait (--timeout is its alias). */
function followFrom(request: ImportRequest): FollowSettings {
  const maxWait = request.maxWait ?? request.timeout;
  return {
    wait: request.wait === true,
    ...(request.results === undefined ? {} : { resultsPath: request.results }),
    timeoutMs: maxWait === undefined ? DEFAULT_MAX_WAIT_MS : seconds(maxWait) * 1000,
  };
}

function seconds(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError('USAGE', `--max-wait must be a positive number of seconds, not '${text}'`);
  return value;
}
