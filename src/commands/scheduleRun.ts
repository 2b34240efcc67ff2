import { resolve } from 'node:path';
import { bullmq } from '../cjsPackages.js';
import { redisPrefix } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import { openServices } from '../services.js';
import { ORDERS } from '../kinds/orders.js';
import { ingestOptionsFromFlags, type IngestFlags } from '../ingest/ingestFlags.js';
import { ScheduleStore, type ScheduleInfo } from '../schedule/scheduleStore.js';
import { checkScheduleSource } from '../schedule/resolveSource.js';
import { nextRunText } from '../schedule/nextRunText.js';
import { foundNoFile } from '../schedule/runScheduledImport.js';
import { SCHEDULES_QUEUE, type ScheduledImportData } from '../schedule/scheduledImportJob.js';
import { jsonText, printReport, type CommandContext, type ConfigFlags } from './options.js';

/** The `schedule` subcommands. */
export type ScheduleAction = 'set' | 'list' | 'remove';

/** Flags of every `schedule` subcommand. */
export interface ScheduleFlags extends ConfigFlags, IngestFlags {
  cron?: string;
  tz?: string;
  source?: string;
  json?: boolean;
}

/** `bulkorder schedule <action>`: returns the exit code. */
export async function runSchedule(
  action: ScheduleAction,
  args: string[],
  flags: ScheduleFlags,
  ctx: CommandContext,
): Promise<number> {
  if (action === 'set') await checkScheduleSource(resolve(flags.source!)); // a usage error needs no Redis
  const prefix = redisPrefix(ctx.config);
  const services = await openServices(ctx.config, ORDERS);
  const queue = new bullmq.Queue<ScheduledImportData>(SCHEDULES_QUEUE, { connection: services.redis, prefix });
  queue.on('error', () => undefined); // surfaced by the call that fails
  const store = new ScheduleStore(queue);
  try {
    switch (action) {
      case 'set': {
        const info = await store.set({
          name: args[0]!,
          cron: flags.cron!,
          ...(flags.tz === undefined ? {} : { tz: flags.tz }),
          source: resolve(flags.source!),
          ingest: await ingestOptionsFromFlags(flags),
        });
        const text = `schedule ${info.name} set: ${describeSchedule(info)}\nthe running workers (bulkorder worker) import it; bulkorder status shows its batches\n`;
        return printReport(ctx.stdout, { text, json: { ...info }, exitCode: ExitCode.ok }, flags.json === true);
      }
      case 'list': {
        const schedules = await store.list();
        if (flags.json === true) ctx.stdout.write(jsonText(schedules));
        else
          ctx.stdout.write(
            schedules.length === 0
              ? 'no schedules\n'
              : schedules.map((s) => `${s.name}: ${describeSchedule(s)}`).join('\n') + '\n',
          );
        return ExitCode.ok;
      }
      case 'remove': {
        if (!(await store.remove(args[0]!)))
          throw new UsageError(
            'SCHEDULE_NOT_FOUND',
            `no schedule ${args[0]} in ${ctx.config.env} (bulkorder schedule list shows them)`,
          );
        ctx.stdout.write(`schedule ${args[0]} removed\n`);
        return ExitCode.ok;
      }
    }
  } finally {
    await queue.close().catch(() => undefined);
    await services.close();
  }
}

/** One schedule as `schedule list` prints it: cron, source, next run and what the last firing did. */
export function describeSchedule(s: ScheduleInfo): string {
  const next = nextRunText(s.next, s.tz);
  const line = `cron "${s.cron}"${s.tz === undefined ? '' : ` (${s.tz})`}, source ${s.source}, next run ${next}`;
  const last = s.lastRun;
  if (last === undefined) return line;
  const at = new Date(last.finishedAt).toISOString();
  if (last.state === 'failed') return `${line}\n  last run ${at} FAILED: ${last.failedReason ?? ''}`;
  // A source that named nothing is not "1 file, 1 refused": the export upstream did not come.
  if (last.result !== undefined && foundNoFile(last.result))
    return `${line}\n  last run ${at}: no file (the source named none; nothing imported)`;
  const files = last.result?.files ?? [];
  const queued = files.reduce((n, f) => n + ('enqueued' in f ? f.enqueued : 0), 0);
  const refused = files.filter((f) => 'refused' in f).length;
  return `${line}\n  last run ${at}: ${files.length} file${files.length === 1 ? '' : 's'}, ${queued} order${queued === 1 ? '' : 's'} queued${refused > 0 ? `, ${refused} file${refused === 1 ? '' : 's'} refused` : ''}`;
}
