import type { Command } from 'commander';
import { type CommandIo, runAction, withConfigFlags, withExamples, withReadingOptions } from './options.js';
import type { ScheduleAction, ScheduleFlags } from './scheduleRun.js';

export function register(program: Command, io: CommandIo): void {
  const group = program
    .command('schedule')
    .summary('import a file, folder or glob on a schedule (e.g. nightly), run by the workers')
    .description(
      'Scheduled imports through BullMQ job schedulers: the running `bulkorder worker` processes import what the source ' +
        'holds when the schedule fires (one of them per firing). A night that runs twice, or a file still there the next ' +
        'night, sends nothing twice: the ledger skips what was delivered or queued before.',
    );
  withExamples(group, [
    'bulkorder schedule set nightly --cron "0 2 * * *" --tz Europe/Amsterdam --source /srv/exports/orders.csv',
    'bulkorder schedule set hourly --cron "15 * * * *" --source "/srv/exports/orders-*.csv"',
    'bulkorder schedule list',
    'bulkorder schedule remove nightly',
  ]);

  const run = (action: ScheduleAction, args: string[], flags: ScheduleFlags): Promise<void> =>
    runAction(
      io,
      flags,
      {
        load: () => import('./scheduleRun.js'),
        announce: action === 'set',
        json: flags.json === true,
        said: { action, ...(args[0] === undefined ? {} : { name: args[0] }) },
      },
      ({ runSchedule }, ctx) => runSchedule(action, args, flags, ctx),
    );

  const set = group
    .command('set')
    .description('create or replace a schedule')
    .argument('<name>', 'the schedule name; setting it again replaces it')
    .requiredOption(
      '--cron <pattern>',
      'cron pattern, e.g. "0 2 * * *" (02:00 every day); six fields put seconds first',
    )
    .option('--tz <zone>', "IANA time zone of the pattern, e.g. Europe/Amsterdam (default: the workers' local time)")
    .requiredOption(
      '--source <path>',
      'a file, a folder (its .csv/.json/.ndjson files) or a glob like "/srv/in/orders-*.csv"',
    )
    .option('--json', 'print the schedule as set, as JSON');
  withExamples(
    withConfigFlags(withReadingOptions(set, 'each file', ' (read now and kept with the schedule)')),
    [
      'bulkorder schedule set nightly --cron "0 2 * * *" --tz Europe/Amsterdam --source /srv/exports',
      'bulkorder schedule set orders --cron "30 3 * * 1-5" --source "/srv/in/orders-*.csv" --encoding windows-1252 --json',
    ],
    'Exit codes: 0 set; 2 a bad pattern, zone, name, or a source that cannot exist; 5 Redis unavailable.',
  ).action((name: string, flags: ScheduleFlags) => run('set', [name], flags));

  const list = withConfigFlags(
    group.command('list').description('list schedules with their next run').option('--json', 'print JSON'),
  );
  withExamples(list, ['bulkorder schedule list', 'bulkorder schedule list --json --config-file .env']).action(
    (flags: ScheduleFlags) => run('list', [], flags),
  );

  const remove = withConfigFlags(group.command('remove').description('remove a schedule').argument('<name>'));
  withExamples(
    remove,
    ['bulkorder schedule remove nightly'],
    'Exit codes: 0 removed; 2 no schedule of that name (schedule list shows them); 5 Redis unavailable.',
  ).action((name: string, flags: ScheduleFlags) => run('remove', [name], flags));
}
