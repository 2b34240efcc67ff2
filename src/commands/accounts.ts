/**
 * `bulkorder accounts ...`: employee accounts on the Cafetariaplan API, through the same
 * import, ledger, workers and results as orders (src/kinds/accounts.ts). `accounts status`,
 * `accounts resume`, `accounts dead-letters` and `accounts review` are the order commands'
 * own builders, given the accounts kind (wired in ./index.ts).
 */
import type { Command } from 'commander';
import { loadCommandContext, printReport, withConfigFlags, withExamples, withImportOptions, withJsonRefusal, withReadingOptions, type ImportFlags, type SetExitCode, type ValidateFlags } from './options.js';

/** Declares `accounts validate|import` and returns the `accounts` group; their code loads only when they run. */
export function register(program: Command, setExitCode: SetExitCode): Command {
  const accounts = program
    .command('accounts')
    .summary('register employees as Cafetariaplan accounts (validate, import, status, resume, dead-letters, review)')
    .description('Employee accounts on the Cafetariaplan API: registered by `bulkorder worker` when Cafetariaplan credentials are configured.');
  withExamples(accounts, ['bulkorder accounts validate samples/employees.csv', 'bulkorder accounts import samples/employees.csv --wait', 'bulkorder accounts status', 'bulkorder accounts dead-letters list']);

  const importCommand = accounts
    .command('import')
    .summary('validate an employee file and queue its accounts for registration')
    .argument('<file>', 'employee file: .csv, .json or .ndjson with email, firstName, lastName, isoLanguageCode, companyId')
    .description(
      'Validate an employee file and queue each valid employee for registration (workers register them). ' +
        'Employees the ledger knows as registered are skipped; rejected rows go to <name>.rejects.csv; ' +
        'with --wait, <name>.results.csv gives every employee its customerId.',
    );
  withExamples(
    withImportOptions(importCommand, 'account'),
    ['bulkorder accounts import samples/employees.csv --wait', 'bulkorder accounts import staff.csv --json', 'bulkorder login --email anna.devries@example.nl --company 3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01'],
    'Exit codes: 0 all valid and (with --wait) all registered; 4 some rows or accounts need attention ' +
      '(rejected, already existing, dead-lettered, held); 3 file refused; 5 Redis unavailable; 2 usage or configuration error.',
  );
  withConfigFlags(importCommand).action(async (file: string, flags: ImportFlags) => {
    const [{ runImport }, { ACCOUNTS }] = await Promise.all([import('../importer/importCommand.js'), import('../kinds/accounts.js')]);
    const json = flags.json === true;
    setExitCode(await withJsonRefusal(json, { file }, async () => printReport(await runImport(file, flags, await loadCommandContext(flags), ACCOUNTS), json)));
  });

  const validate = accounts
    .command('validate')
    .summary('check an employee file without sending anything (no Redis, no network)')
    .argument('<file>', 'employee file: .csv, .json or .ndjson');
  withReadingOptions(validate, 'the file', '', 'accounts')
    .option('--out <path>', 'where rejected rows go (default <name>.rejects.csv beside the file)')
    .option('--json', 'print the summary as JSON on stdout');
  withExamples(
    validate,
    ['bulkorder accounts validate samples/employees.csv', 'bulkorder accounts validate staff.csv --out /tmp/staff.rejects.csv --json'],
    'Exit codes: 0 every employee valid; 4 some rows rejected (see the rejects file); 3 file refused as a whole; 2 usage error.',
  );
  validate.action(async (file: string, flags: ValidateFlags) => {
    const [{ validateFile }, { ingestOptionsFromFlags }, { validationReport }, { ACCOUNTS }] = await Promise.all([
      import('../ingest/validateFile.js'),
      import('../ingest/ingestFlags.js'),
      import('../ingest/validationReport.js'),
      import('../kinds/accounts.js'),
    ]);
    const options = { ...(await ingestOptionsFromFlags(flags, ACCOUNTS.columns)), ...(flags.out === undefined ? {} : { out: flags.out }) };
    const result = await validateFile(file, options, ACCOUNTS);
    process.stdout.write(validationReport(file, result, flags.json === true));
    setExitCode(result.exitCode);
  });
  return accounts;
}
