import { ExitCode } from '../errors.js';
import { pauseQueue, queueStatus, resumeDelivery } from '../services/queueStatus.js';
import { KINDS } from '../kinds/kindByName.js';
import { openServices, type Services } from '../services.js';
import type { CommandContext, RecordKindName, ConfigFlags } from './options.js';
import { openSummary, readOpen } from '../open/openList.js';

/** Flags of `status` and `accounts status`. */
export interface StatusFlags extends ConfigFlags {
  json?: boolean;
  limit?: string;
}

/** Opens the kind's services, prints what `say` answers, closes them: status, pause and resume alike. */
async function printWith(
  kind: RecordKindName,
  ctx: CommandContext,
  say: (services: Services<unknown>) => Promise<string>,
  options: { allowEviction?: boolean } = {},
): Promise<number> {
  const services = await openServices(ctx.config, KINDS[kind], options);
  try {
    ctx.stdout.write(await say(services));
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}

/** `bulkorder [accounts] status`. */
export function runStatus(
  kind: RecordKindName,
  batchId: string | undefined,
  flags: StatusFlags,
  ctx: CommandContext,
): Promise<number> {
  return printWith(
    kind,
    ctx,
    async (services) => {
      const json = flags.json === true;
      const status = await queueStatus(services, {
        ...(batchId === undefined ? {} : { batchId }),
        limit: Number(flags.limit ?? 10),
        json,
        timeZone: ctx.config.timeZone,
      });
      // What still needs a person, in one line (`open` lists it): across batches, whichever batch was asked for.
      const open = await readOpen({ services, cli: services.kind.cli, now: Date.now() });
      if (json) {
        const report = JSON.parse(status) as Record<string, unknown>;
        const summary = { total: open.total, counts: open.counts, acknowledged: open.acknowledged.length };
        return JSON.stringify({ ...report, open: summary }, null, 2) + '\n';
      }
      return `${status}\n${openSummary(open, services.kind.cli)}\n`;
    },
    // status reads, and says when Redis evicts (workers then take no jobs) rather than refusing to.
    { allowEviction: true },
  );
}

/** `bulkorder [accounts] resume`: clears a manual pause and the kind's breaker (requeueing its burst) and resumes its queue. */
export function runResume(kind: RecordKindName, ctx: CommandContext): Promise<number> {
  return printWith(kind, ctx, (services) => resumeDelivery(services, ctx.logger));
}

/** `bulkorder [accounts] pause`: pauses the kind's queue for every worker until `resume`. */
export function runPause(kind: RecordKindName, ctx: CommandContext): Promise<number> {
  return printWith(kind, ctx, (services) => pauseQueue(services));
}
