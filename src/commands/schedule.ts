import type { Command } from 'commander';
import type { SetExitCode } from './options.js';
import { loadCommandContext, withConfigFlags, withReadingOptions, type ScheduleAction, type ScheduleFlags } from './options.js';

export function register(program: Command, setExitCode: SetExitCode): void {
  const group = program
    .command('schedule')
    .summary('import a file, folder or glob on a schedule (e.g. nightly), run by the workers')
    .description(
      'Scheduled imports through BullMQ job schedulers: the running `bulkorder worker` processes import what the source ' +
        'holds when the schedule fires (one of them per firing). A night that runs twice, or a file still there the next ' +
        'night, sends nothing twice: the ledger skips what was delivered or queued before.',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  bulkorder schedule set nightly --cron "0 2 * * *" --tz Europe/Amsterdam --source /srv/exports/orders.csv\n' +
        '  bulkorder schedule set hourly --cron "15 * * * *" --source "/srv/exports/orders-*.csv"\n  bulkorder schedule list\n  bulkorder schedule remove nightly',
    );

  const run = async (action: ScheduleAction, args: string[], flags: ScheduleFlags): Promise<void> => {
    const { runSchedule } = await import('./scheduleRun.js');
    setExitCode(await runSchedule(action, args, flags, await loadCommandContext(flags, { announce: action === 'set' })));
  };

  withConfigFlags(
    withReadingOptions(
      group
        .command('set')
      .description('create or replace a schedule')
      .argument('<name>', 'the schedule name; setting it again replaces it')
      .requiredOption('--cron <pattern>', 'cron pattern, e.g. "0 2 * * *" (02:00 every day); six fields put seconds first')
      .option('--tz <zone>', 'IANA time zone of the pattern, e.g. Europe/Amsterdam (default: the workers\' local time)')
      .requiredOption('--source <path>', 'a file, a folder (its .csv/.json/.ndjson files) or a glob like "/srv/in/orders-*.csv"'),
      'each file',
      ' (read now and kept with the schedule)',
    ),
  ).action((name: string, flags: ScheduleFlags) => run('set', [name], flags));

  withConfigFlags(group.command('list').description('list schedules with their next run').option('--json', 'print JSON')).action((flags: ScheduleFlags) => run('list', [], flags));

  withConfigFlags(group.command('remove').description('remove a schedule').argument('<name>')).action((name: string, flags: ScheduleFlags) => run('remove', [name], flags));
}
