import type { Command } from 'commander';
import type { SetExitCode } from './options.js';
import { loadCommandContext, printReport, withConfigFlags, withExamples, withImportOptions, withJsonRefusal, type ImportFlags } from './options.js';

export function register(program: Command, setExitCode: SetExitCode): void {
  const command = program
    .command('import')
    .summary('validate a file and queue its orders for delivery (--wait to follow it to the end)')
    .argument('<file>', 'order file: .csv, .json or .ndjson')
    .description(
      'Validate a file and queue its valid orders for delivery (workers send them). ' +
        'Orders the ledger knows as delivered are skipped; rejected rows go to <name>.rejects.csv.',
    );
  withExamples(
    withImportOptions(command, 'order'),
    ['bulkorder import samples/gift-orders.csv --wait', 'bulkorder import nightly.csv --encoding windows-1252', 'bulkorder import nightly.csv --wait --max-wait 3600 --json > nightly.summary.json'],
    'Exit codes: 0 every order delivered now or before with the same content (without --wait: all ' +
      'valid and queued by this batch or already delivered); 4 some rows or orders need attention ' +
      '(rejected, ORDER_REF_REUSED, dead-lettered, held) or are not finished (queued by another batch ' +
      'without --wait, or still pending at --timeout); 3 file refused; 5 Redis unavailable, or --wait gave ' +
      'up at --max-wait (the reason is printed: breaker open, queue paused, no worker running); 2 usage error.',
  );
  withConfigFlags(command).action(async (file: string, flags: ImportFlags) => {
    const [{ runImport }, { ORDERS }] = await Promise.all([import('../importer/importCommand.js'), import('../kinds/orders.js')]);
    const json = flags.json === true;
    setExitCode(await withJsonRefusal(json, { file }, async () => printReport(await runImport(file, flags, await loadCommandContext(flags), ORDERS), json)));
  });
}
