import { apiTarget, redisPrefix } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import { openServices } from '../services.js';
import { ingestOptionsFromFlags, type IngestFlags } from '../ingest/ingestFlags.js';
import { ORDERS } from '../kinds/orders.js';
import { watchFolder, type WatchReport } from '../watch/watchFolder.js';
import { signalExitCode, type CommandReport, type StopSignal } from './options.js';
import { printReport, type CommandContext, type ConfigFlags } from './options.js';

/** Flags of `bulkorder watch`. */
export interface WatchFlags extends ConfigFlags, IngestFlags {
  stable?: string;
  poll?: string;
  maxSize?: string;
  maxActive?: string;
  once?: boolean;
  deliver?: boolean;
  json?: boolean;
}

/** `bulkorder watch <dir>`: runs until SIGTERM/SIGINT (or, with --once, until the inbox is worked off). */
export async function runWatch(dir: string, flags: WatchFlags, ctx: CommandContext): Promise<number> {
  const options = {
    stableMs: number(flags.stable ?? '5', '--stable', 0) * 1000,
    pollMs: number(flags.poll ?? '1', '--poll', 0.01) * 1000,
    maxBytes: number(flags.maxSize ?? '512', '--max-size', 0.001) * 1024 * 1024,
    maxActive: Math.floor(number(flags.maxActive ?? '4', '--max-active', 1)),
    ingest: await ingestOptionsFromFlags(flags),
  };
  // The jobs of its imports stamped on Redis's clock, as `import` stamps them.
  const services = await openServices(ctx.config, ORDERS, { role: 'worker', adoptRedisClock: true });
  let delivery: { close(): Promise<void> } | undefined;
  try {
    if (flags.deliver === true) {
      const { startBusinessDelivery } = await import('../assembly/startWorkers.js');
      delivery = await startBusinessDelivery(ctx.config, ctx.logger, {
        prefix: redisPrefix(ctx.config),
        delivery: ctx.config.delivery,
        // BullMQ's delayed jobs and schedules on Redis's clock, as in `bulkorder worker`.
        adoptRedisClock: true,
      });
    }
  } catch (error) {
    await services.close();
    throw error;
  }
  const stop = new AbortController();
  // The stop policy (stopPolicy.ts) ends the process at the grace period's end if Redis keeps this from returning.
  const withdraw = ctx.stop.graceful((signal) => {
    ctx.logger.info(
      { signal },
      'stopping: no new files; files being followed stay in processing/ and resume on the next start',
    );
    stop.abort();
  }, ctx.config.delivery.shutdownGraceMs);
  try {
    const report = await watchFolder(
      {
        dir,
        ...options,
        once: flags.once === true,
        signal: stop.signal,
        onWaiting: (message) => ctx.stderr.write(`bulkorder watch: ${message}\n`),
      },
      { services, target: apiTarget(ctx.config, ORDERS.api), logger: ctx.logger },
    );
    if (flags.once !== true) return report.needsAttention > 0 ? ExitCode.needsAttention : ExitCode.ok;
    return printReport(ctx.stdout, onceReport(report, ctx.stop.stoppedBy), flags.json === true);
  } finally {
    withdraw();
    await delivery?.close();
    await services.close();
  }
}

/**
 * What `watch --once` reports: each file with where its trail is, what is left in processing/ and
 * why, and an exit code that is never "ok" when a signal (`stoppedBy`) cut the inbox short.
 */
function onceReport(report: WatchReport, stoppedBy: StopSignal | undefined): CommandReport {
  // --once promises the inbox worked off: a signal that cut it short is never "ok".
  const leftOpen = report.needsAttention > 0 || report.unclaimed.length > 0;
  const workedOff = leftOpen ? ExitCode.needsAttention : ExitCode.ok;
  const exitCode = stoppedBy !== undefined ? signalExitCode(stoppedBy) : workedOff;
  const { folder, files, needsAttention, unclaimed } = report;
  const lines = [
    `${folder.root}: ${report.done.length} done, ${report.failed.length} failed${needsAttention > 0 ? `; ${needsAttention} need attention (each has a .needs-attention note in done/ saying what; refused files are in failed/)` : ''}`,
    // Each file with where its trail is: the results, rejected rows and the note.
    ...files.map(
      (f) =>
        `  ${f.file}: ${f.outcome}${f.outcome === 'failed' ? ` (${String(f.code)})` : ''}${f.needsAttention === true && f.outcome === 'done' ? ', needs attention' : ''}${typeof f.resultsFile === 'string' ? `; results ${f.resultsFile}` : ''}${typeof f.rejectsFile === 'string' ? `; rejects ${f.rejectsFile}` : ''}`,
    ),
  ];
  if (report.unclaimed.length > 0) {
    lines.push(
      `still in processing/ under another watcher's lock (not taken): ${report.unclaimed.join(', ')}; if no watcher is running, run watch --once again once the lock lapses`,
    );
  }
  if (stoppedBy !== undefined) {
    lines.push(
      `stopped by ${stoppedBy} before the inbox was worked off${report.interrupted.length > 0 ? `; left in processing/ (resumed by the next watch): ${report.interrupted.join(', ')}` : ''}`,
    );
  }
  return {
    text: lines.join('\n') + '\n',
    // Each file with its summary (what .summary.json holds), not its name only.
    json: {
      folder: folder.root,
      done: files.filter((f) => f.outcome === 'done'),
      failed: files.filter((f) => f.outcome === 'failed'),
      needsAttention,
      unclaimed,
      ...(stoppedBy === undefined
        ? {}
        : { interrupted: { code: 'INTERRUPTED', signal: stoppedBy, inProcessing: report.interrupted } }),
    },
    exitCode,
  };
}

function number(text: string, flag: string, min: number): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min)
    throw new UsageError('USAGE', `${flag} must be a number of at least ${min} (got '${text}').`);
  return value;
}
