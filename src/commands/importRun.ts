import { UsageError } from '../errors.js';
import { ingestOptionsFromFlags, type IngestFlags } from '../ingest/ingestFlags.js';
import type { RecordKind } from '../kinds/recordKind.js';
import { openServices } from '../services.js';
import { importAndFollow, type FollowSettings } from '../importer/importAndFollow.js';
import type { ImportOptions } from '../importer/importFile.js';
import type { LedgerLossPolicy } from '../importer/importJournal.js';
import type { CommandContext, CommandReport, ConfigFlags } from './options.js';

/** Flags of `import` and `accounts import`. */
export interface ImportFlags extends ConfigFlags, IngestFlags {
  json?: boolean;
  wait?: boolean;
  force?: boolean;
  retryRefused?: boolean;
  trustResults?: boolean;
  rejects?: string;
  results?: string;
  timeout?: string;
  maxWait?: string;
}

/** `--wait` gives up after this by default (--max-wait): a nightly cron job must end. */
const DEFAULT_MAX_WAIT_MS = 6 * 3600 * 1000;

/**
 * `bulkorder import` and `bulkorder accounts import`: imports (and with --wait follows) one file
 * of the kind; returns the report (text and JSON) and the exit code for the command to print.
 */
export async function runImport<P>(
  file: string,
  request: ImportFlags,
  ctx: CommandContext,
  kind: RecordKind<P>,
): Promise<CommandReport> {
  // Its jobs are stamped on Redis's clock, as the workers that compare their stamps read it.
  const services = await openServices(ctx.config, kind, { adoptRedisClock: true });
  try {
    if (kind.name === 'accounts' && ctx.config.credentials.cafetariaplan === undefined) {
      // Importing needs no credentials, but only a worker that has them registers accounts.
      ctx.stderr.write(
        'note: no Cafetariaplan credentials here (BULKORDER_CAFETARIAPLAN_CLIENT_ID/_SECRET): accounts are queued, and a `bulkorder worker` that has them registers them.\n',
      );
    }
    const outcome = await importAndFollow(
      file,
      await importOptionsFrom(request, kind),
      { services, logger: ctx.logger },
      {
        ...followFrom(request),
        out: ctx.stderr,
      },
    );
    return { text: outcome.report, json: outcome.json, exitCode: outcome.exitCode };
  } finally {
    await services.close();
  }
}

/** ImportOptions from the request; --map is checked against the kind's fields. */
async function importOptionsFrom<P>(request: ImportFlags, kind: RecordKind<P>): Promise<ImportOptions> {
  return {
    ...(await ingestOptionsFromFlags(request, kind.columns)),
    force: request.force === true,
    retryRefused: request.retryRefused === true,
    ...(request.rejects === undefined ? {} : { rejectsPath: request.rejects }),
  };
}

/** FollowSettings from --wait, --results and --max-wait (--timeout is its alias), --force and --trust-results. */
function followFrom(request: ImportFlags): FollowSettings {
  const maxWait = request.maxWait ?? request.timeout;
  if (request.force === true && request.trustResults === true)
    throw new UsageError(
      'USAGE',
      '--force sends everything and --trust-results skips what the results file records as delivered: choose one',
    );
  return {
    wait: request.wait === true,
    // The import journal and the results file as a second ledger (issue 26, README "The import journal").
    ledgerGuard: {
      policy: ledgerPolicy(request),
    },
    ...(request.results === undefined ? {} : { resultsPath: request.results }),
    timeoutMs: maxWait === undefined ? DEFAULT_MAX_WAIT_MS : seconds(maxWait) * 1000,
  };
}

function seconds(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new UsageError('USAGE', `--max-wait must be a positive number of seconds, not '${text}'`);
  return value;
}

/** The ledger-loss policy the flags chose (both together are refused above); neither flag: refuse. */
function ledgerPolicy(request: { force?: boolean; trustResults?: boolean }): LedgerLossPolicy {
  if (request.force === true) return 'force';
  if (request.trustResults === true) return 'trust-results';
  return 'refuse';
}
