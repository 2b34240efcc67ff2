import { apiTarget, redisPrefix } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import { openServices } from '../services.js';
import { ingestOptionsFromFlags, type IngestFlags } from '../ingest/ingestFlags.js';
import { ORDERS } from '../kinds/orders.js';
import { watchFolder } from '../watch/watchFolder.js';
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
  const services = await openServices(ctx.config, ORDERS, { role: 'worker' });
  let delivery: { close(): Promise<void> } | undefined;
  try {
    if (flags.deliver === true) {
      const { startBusinessDelivery } = await import('../assembly/startWorkers.js');
      delivery = await startBusinessDelivery(ctx.config, ctx.logger, {
        prefix: redisPrefix(ctx.config),
        delivery: ctx.config.delivery,
      });
    }
  } catch (error) {
    await services.close();
    throw error;
  }
  const stop = new AbortController();
  const onSignal = (signal: string) => {
    ctx.logger.info(
      { signal },
      'stopping: no new files; files being followed stay in processing/ and resume on the next start',
    );
    stop.abort();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
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
    const exitCode = report.needsAttention > 0 || report.unclaimed.length > 0 ? ExitCode.needsAttention : ExitCode.ok;
    if (flags.once !== true) return exitCode;
    const { folder, ...rest } = report;
    const lines = [
      `${folder.root}: ${report.done.length} done, ${report.failed.length} failed${report.needsAttention > 0 ? `; ${report.needsAttention} need attention (see their .summary.json)` : ''}`,
    ];
    if (report.unclaimed.length > 0) {
      lines.push(
        `still in processing/ under another watcher's lock (not taken): ${report.unclaimed.join(', ')}; if no watcher is running, run watch --once again once the lock lapses`,
      );
    }
    return printReport(
      ctx.stdout,
      { text: lines.join('\n') + '\n', json: { folder: folder.root, ...rest }, exitCode },
      flags.json === true,
    );
  } finally {
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    await delivery?.close();
    await services.close();
  }
}

function number(text: string, flag: string, min: number): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min)
    throw new UsageError('USAGE', `${flag} must be a number of at least ${min} (got '${text}').`);
  return value;
}
