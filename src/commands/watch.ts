import type { Command } from 'commander';
import { type CommandIo, runAction, withConfigFlags, withExamples, withReadingOptions } from './options.js';
import type { WatchFlags } from './watchRun.js';

export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('watch')
    .summary('import every file dropped into a folder (inbox/ -> processing/ -> done/ or failed/)')
    .argument('<dir>', 'the drop folder; inbox/, processing/, done/ and failed/ are created in it if missing')
    .description(
      'Import every complete file put into <dir>/inbox/. A file is claimed by an atomic rename into processing/ ' +
        '(any number of watchers may share the folder), imported, and followed until every order settles; then it moves ' +
        'to done/ with its .results.csv, .rejects.csv and .summary.json (to failed/ with a .summary.json when refused as a whole). ' +
        'Uploads named *.tmp, *.part (or hidden) are left alone until renamed; other files must keep their size for --stable seconds. ' +
        'Files left in processing/ by a watcher that stopped are resumed without sending anything twice. Workers (bulkorder worker) deliver.',
    )
    .option('--stable <seconds>', 'a file is taken once unchanged this long', '5')
    .option('--poll <seconds>', 'how often the inbox is looked at', '1')
    .option('--max-size <MiB>', 'larger files are refused (moved to failed/)', '512')
    .option('--max-active <n>', 'files worked on at once', '4')
    .option('--once', 'take what the inbox holds, finish those files, then exit (for cron)')
    .option(
      '--deliver',
      'also deliver in this process, as `bulkorder worker` does (otherwise workers elsewhere deliver)',
    )
    .option('--json', 'with --once: print what was done as JSON on stdout');
  withExamples(
    withConfigFlags(withReadingOptions(command, 'each file')),
    [
      'bulkorder watch /srv/orders --config-file .env',
      'bulkorder watch /srv/orders --once --deliver --stable 30   # cron, no worker',
      'bulkorder watch /srv/orders --once --json',
    ],
    'Exit codes (--once): 0 every file done without problems; 4 some file failed or has rejected, dead-lettered or held orders, ' +
      "or a file stayed in processing/ under another watcher's lock (the waiting is said on stderr); " +
      '5 the disk refused a write, or a Redis Cluster did not serve for BULKORDER_REDIS_FAILOVER_MAX_MS (the file stays in processing/).',
  ).action((dir: string, flags: WatchFlags) =>
    runAction(
      io,
      flags,
      { load: () => import('./watchRun.js'), json: flags.json === true && flags.once === true, said: { dir } },
      ({ runWatch }, ctx) => runWatch(dir, flags, ctx),
    ),
  );
}
