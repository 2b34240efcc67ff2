import { resolve } from 'node:path';
import { bullmq } from '../cjsPackages.js';
import { apiTarget, redisPrefix } from '../config.js';
import { defined, ExitCode, UsageError } from '../errors.js';
import { openServices } from '../services.js';
import { adoptClock, RedisClock } from '../redis/redisClock.js';
import { ORDERS } from '../kinds/orders.js';
import { ingestOptionsFromFlags, type IngestFlags } from '../ingest/ingestFlags.js';
import { ScheduleStore, type ScheduleInfo } from '../schedule/scheduleStore.js';
import { checkScheduleSource } from '../schedule/resolveSource.js';
import { otherTargetOfSource } from '../watch/folderTarget.js';
import { nextRunText } from '../schedule/nextRunText.js';
import { localTime } from '../timeText.js';
import { foundNoFile, type ScheduledFileImported } from '../schedule/runScheduledImport.js';
import { SCHEDULES_QUEUE, type ScheduledImportData } from '../schedule/scheduledImportJob.js';
import { printReport, type CommandContext, type ConfigFlags } from './options.js';

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
  // commander requires --source and --cron of `set`, and its name.
  const source = action === 'set' ? resolve(defined(flags.source, '--source')) : '';
  if (action === 'set') {
    // Usage errors need no Redis.
    await checkScheduleSource(source);
    const refusal = await otherTargetOfSource(source, apiTarget(ctx.config, ORDERS.api));
    if (refusal !== undefined) throw refusal;
  }
  const prefix = redisPrefix(ctx.config);
  const services = await openServices(ctx.config, ORDERS);
  const queue = new (bullmq().Queue)<ScheduledImportData>(SCHEDULES_QUEUE, { connection: services.redis, prefix });
  queue.on('error', () => undefined); // surfaced by the call that fails
  const store = new ScheduleStore(queue);
  // BullMQ takes a schedule's first slot from Date.now(): Redis's, as the workers that fire it use.
  const clock = new RedisClock(services.redis);
  let unadopt = (): void => undefined;
  try {
    unadopt = adoptClock(await clock.start());
    switch (action) {
      case 'set': {
        const info = await store.set({
          name: defined(args[0], 'the schedule name'),
          cron: defined(flags.cron, '--cron'),
          ...(flags.tz === undefined ? {} : { tz: flags.tz }),
          source,
          ingest: await ingestOptionsFromFlags(flags),
        });
        const text = `schedule ${info.name} set: ${describeSchedule(info, ctx.config.timeZone)}\nthe running workers (bulkorder worker) import it; bulkorder status shows its batches\n`;
        return printReport(ctx.stdout, { text, json: { ...info }, exitCode: ExitCode.ok }, flags.json === true);
      }
      case 'list': {
        const schedules = await store.list();
        // One object, as every --json prints: the schedules under `schedules`.
        const text =
          schedules.length === 0
            ? 'no schedules\n'
            : schedules.map((s) => `${s.name}: ${describeSchedule(s, ctx.config.timeZone)}`).join('\n') + '\n';
        return printReport(ctx.stdout, { text, json: { schedules }, exitCode: ExitCode.ok }, flags.json === true);
      }
      case 'remove': {
        if (!(await store.remove(defined(args[0], 'the schedule name'))))
          throw new UsageError(
            'SCHEDULE_NOT_FOUND',
            `no schedule ${args[0]} in ${ctx.config.env} (bulkorder schedule list shows them)`,
          );
        ctx.stdout.write(`schedule ${args[0]} removed\n`);
        return ExitCode.ok;
      }
    }
  } finally {
    unadopt();
    clock.stop();
    await queue.close().catch(() => undefined);
    await services.close();
  }
}

/** One schedule as `schedule list` prints it: cron, source, next run and what the last firing did. */
export function describeSchedule(s: ScheduleInfo, timeZone: string): string {
  const next = nextRunText(s.next, s.tz, timeZone);
  const line = `cron "${s.cron}"${s.tz === undefined ? '' : ` (${s.tz})`}, source ${s.source}, next run ${next}`;
  const last = s.lastRun;
  if (last === undefined) return line;
  const at = localTime(last.finishedAt, timeZone);
  if (last.state === 'failed') return `${line}\n  last run ${at} FAILED: ${last.failedReason ?? ''}`;
  // A source that named nothing is not "1 file, 1 refused": the export upstream did not come.
  if (last.result !== undefined && foundNoFile(last.result))
    return `${line}\n  last run ${at}: no file (the source named none; nothing imported)`;
  const files = last.result?.files ?? [];
  const imported = files.filter((f): f is ScheduledFileImported => 'batchId' in f);
  const sum = (field: 'enqueued' | 'rejected' | 'conflicts') => imported.reduce((n, f) => n + (f[field] ?? 0), 0);
  const [queued, rejected, reused] = [sum('enqueued'), sum('rejected'), sum('conflicts')];
  const refused = files.filter((f) => 'refused' in f).length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const head = [
    plural(files.length, 'file'),
    `${plural(queued, 'order')} queued`,
    ...(rejected > 0 ? [`${plural(rejected, 'order')} rejected`] : []),
    ...(reused > 0
      ? [`${plural(reused, 'order')} not sent: ORDER_REF_REUSED (an orderRef sent before with other content)`]
      : []),
    ...(refused > 0 ? [`${plural(refused, 'file')} refused`] : []),
  ].join(', ');
  // Each file's trail, so the rejected rows are one copy-paste away.
  const detail = files.map((f) =>
    'refused' in f
      ? `    ${f.file}: refused, ${f.refused}`
      : `    ${f.file}: batch ${f.batchId}${f.rejectsFile === undefined ? '' : `, rejects ${f.rejectsFile}`}${f.resultsFile === undefined ? '' : `, results ${f.resultsFile}`}`,
  );
  return [`${line}`, `  last run ${at}: ${head}`, ...detail].join('\n');
}
