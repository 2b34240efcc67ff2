import type { Command } from 'commander';
import {
  loadCommandContext,
  printReport,
  withConfigFlags,
  withExamples,
  withImportOptions,
  withJsonRefusal,
  type CommandIo,
  type RecordKindName,
} from './options.js';
import type { ImportFlags } from './importRun.js';

/** Declares `import` under `parent` for one kind (`bulkorder import`, `bulkorder accounts import`); its code loads only when it runs. */
export function register(parent: Command, io: CommandIo, kind: RecordKindName): void {
  const command = kind === 'orders' ? describeOrders(parent) : describeAccounts(parent);
  withConfigFlags(command).action(async (file: string, flags: ImportFlags) => {
    const [{ runImport }, { KINDS }] = await Promise.all([import('./importRun.js'), import('../kinds/kindByName.js')]);
    const json = flags.json === true;
    io.setExitCode(
      await withJsonRefusal(io.stdout, json, { file }, async () =>
        printReport(io.stdout, await runImport(file, flags, await loadCommandContext(flags, io), KINDS[kind]), json),
      ),
    );
  });
}

function describeOrders(parent: Command): Command {
  const command = parent
    .command('import')
    .summary('validate a file and queue its orders for delivery (--wait to follow it to the end)')
    .argument('<file>', 'order file: .csv, .json or .ndjson')
    .description(
      'Validate a file and queue its valid orders for delivery (workers send them). ' +
        'Orders the ledger knows as delivered are skipped; rejected rows go to <name>.rejects.csv.',
    );
  return withExamples(
    withImportOptions(command, 'order'),
    [
      'bulkorder import samples/gift-orders.csv --wait',
      'bulkorder import nightly.csv --encoding windows-1252',
      'bulkorder import nightly.csv --wait --max-wait 3600 --json > nightly.summary.json',
    ],
    'Exit codes: 0 every order delivered now or before with the same content (without --wait: all ' +
      'valid and queued by this batch or already delivered); 4 some rows or orders need attention ' +
      '(rejected, ORDER_REF_REUSED, dead-lettered, held) or are not finished (queued by another batch ' +
      'without --wait, or still pending at --timeout); 3 file refused; 5 Redis unavailable, Redis forgot an ' +
      'earlier import of this file (LEDGER_LOST: --trust-results or --force to go on), or --wait gave ' +
      'up at --max-wait (the reason is printed: breaker open, queue paused, no worker running); 2 usage error.',
  );
}

function describeAccounts(accounts: Command): Command {
  const command = accounts
    .command('import')
    .summary('validate an employee file and queue its accounts for registration')
    .argument(
      '<file>',
      'employee file: .csv, .json or .ndjson with email, firstName, lastName, isoLanguageCode, companyId',
    )
    .description(
      'Validate an employee file and queue each valid employee for registration (workers register them). ' +
        'Employees the ledger knows as registered are skipped; rejected rows go to <name>.rejects.csv; ' +
        'with --wait, <name>.results.csv gives every employee its customerId.',
    );
  return withExamples(
    withImportOptions(command, 'account'),
    [
      'bulkorder accounts import samples/employees.csv --wait',
      'bulkorder accounts import staff.csv --json',
      'bulkorder login --email anna.devries@example.nl --company 3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01',
    ],
    'Exit codes: 0 all valid and (with --wait) all registered; 4 some rows or accounts need attention ' +
      '(rejected, already existing, dead-lettered, held); 3 file refused; 5 Redis unavailable or forgot an earlier import ' +
      'of this file (LEDGER_LOST); 2 usage or configuration error.',
  );
}
