/**
 * `bulkorder accounts ...`: employee accounts on the Cafetariaplan API, through the same
 * import, ledger, workers and results as orders (src/accounts).
 */
import type { Command } from 'commander';
import type { SetExitCode } from './index.js';
import { loadCommandContext, withConfigFlags, type ConfigFlags } from './context.js';
import { withImportOptions, type ImportFlags } from './import.js';
import { withReadingOptions } from './readingOptions.js';
import type { ValidateFlags } from './validate.js';

export type { ValidateFlags };

/** Declares `accounts validate|import|status|resume`; their code loads only when they run. */
export function register(program: Command, setExitCode: SetExitCode): void {
  const accounts = program
    .command('accounts')
    .summary('register employees as Cafetariaplan accounts (validate, import, status, resume)')
    .description('Employee accounts on the Cafetariaplan API: registered by `bulkorder worker` when Cafetariaplan credentials are configured.');

  const importCommand = accounts
    .command('import')
    .summary('validate an employee file and queue its accounts for registration')
    .argument('<file>', 'employee file: .csv, .json or .ndjson with email, firstName, lastName, isoLanguageCode, companyId')
    .description(
      'Validate an employee file and queue each valid employee for registration (workers register them).\n' +
        'Employees the ledger knows as registered are skipped; rejected rows go to <name>.rejects.csv;\n' +
        'with --wait, <name>.results.csv gives every employee its customerId.',
    );
  withImportOptions(importCommand, 'account').addHelpText(
    'after',
    '\nExamples:\n  bulkorder accounts import samples/employees.csv --wait\n  bulkorder login --email anna.devries@example.nl --company 3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01\n\n' +
      'Exit codes: 0 all valid and (with --wait) all registered; 4 some rows or accounts need attention\n' +
      '(rejected, already existing, dead-lettered, held); 3 file refused; 5 Redis unavailable; 2 usage or configuration error.',
  );
  withConfigFlags(importCommand).action(async (file: string, flags: ImportFlags) => {
    const { runAccountsImport } = await import('./accountsRun.js');
    setExitCode(await runAccountsImport(file, flags, await loadCommandContext(flags)));
  });

  const validate = accounts
    .command('validate')
    .summary('check an employee file without sending anything (no Redis, no network)')
    .argument('<file>', 'employee file: .csv, .json or .ndjson');
  withReadingOptions(validate)
    .option('--out <path>', 'where rejected rows go (default <name>.rejects.csv beside the file)')
    .option('--json', 'print the summary as JSON on stdout')
    .addHelpText('after', '\nExit codes: 0 every employee valid; 4 some rows rejected (see the rejects file); 3 file refused as a whole; 2 usage error.');
  validate.action(async (file: string, flags: ValidateFlags) => {
    const { runAccountsValidate } = await import('./accountsRun.js');
    setExitCode(await runAccountsValidate(file, flags));
  });

  const status = accounts
    .command('status')
    .summary('account batches, the accounts queue and its circuit breaker')
    .argument('[batch]', 'one batch id (default: the most recent batches)')
    .option('--json', 'machine-readable output');
  withConfigFlags(status).action(async (batchId: string | undefined, flags: ConfigFlags & { json?: boolean }) => {
    const { runAccountsStatus } = await import('./accountsRun.js');
    setExitCode(await runAccountsStatus(batchId, flags, await loadCommandContext(flags)));
  });

  const resume = accounts.command('resume').summary('resume account registration after the circuit breaker paused it');
  withConfigFlags(resume).action(async (flags: ConfigFlags) => {
    const { runAccountsResume } = await import('./accountsRun.js');
    setExitCode(await runAccountsResume(await loadCommandContext(flags)));
  });
}
