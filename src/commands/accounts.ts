/**
 * `bulkorder accounts ...`: employee accounts on the Cafetariaplan API, through the same
 * import, ledger, workers and results as orders (src/kinds/accounts.ts). `accounts import`, `accounts status`,
 * `accounts resume`, `accounts dead-letters` and `accounts review` are the order commands'
 * own builders, given the accounts kind (wired in ./index.ts).
 */
import type { Command } from 'commander';
import { withExamples, withReadingOptions, type CommandIo, type ValidateFlags } from './options.js';

/** Declares `accounts validate` and returns the `accounts` group (./index.ts adds `accounts import` and the rest); its code loads only when it runs. */
export function register(program: Command, io: CommandIo): Command {
  const accounts = program
    .command('accounts')
    .summary('register employees as Cafetariaplan accounts (validate, import, status, resume, dead-letters, review)')
    .description(
      'Employee accounts on the Cafetariaplan API: registered by `bulkorder worker` when Cafetariaplan credentials are configured.',
    );
  withExamples(accounts, [
    'bulkorder accounts validate samples/employees.csv',
    'bulkorder accounts import samples/employees.csv --wait',
    'bulkorder accounts status',
    'bulkorder accounts dead-letters list',
  ]);

  const validate = accounts
    .command('validate')
    .summary('check an employee file without sending anything (no Redis, no network)')
    .argument('<file>', 'employee file: .csv, .json or .ndjson');
  withReadingOptions(validate, 'the file', '', 'accounts')
    .option('--out <path>', 'where rejected rows go (default <name>.rejects.csv beside the file)')
    .option('--json', 'print the summary as JSON on stdout');
  withExamples(
    validate,
    [
      'bulkorder accounts validate samples/employees.csv',
      'bulkorder accounts validate staff.csv --out /tmp/staff.rejects.csv --json',
    ],
    'Exit codes: 0 every employee valid; 4 some rows rejected (see the rejects file); 3 file refused as a whole; 2 usage error.',
  );
  validate.action(async (file: string, flags: ValidateFlags) => {
    const [
      { validateFile },
      { ingestOptionsFromFlags },
      { validationReport },
      { ACCOUNTS },
      { loadCsvOutputSettings },
    ] = await Promise.all([
      import('../ingest/validateFile.js'),
      import('../ingest/ingestFlags.js'),
      import('../ingest/validationReport.js'),
      import('../kinds/accounts.js'),
      import('../config.js'),
    ]);
    const options = {
      ...(await ingestOptionsFromFlags(flags, ACCOUNTS.columns)),
      ...(flags.out === undefined ? {} : { out: flags.out }),
      output: loadCsvOutputSettings(io.env),
    };
    const result = await validateFile(file, options, ACCOUNTS);
    io.stdout.write(validationReport(file, result, flags.json === true));
    io.setExitCode(result.exitCode);
  });
  return accounts;
}
