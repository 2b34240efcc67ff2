import type { Command } from 'commander';
import { withExamples, withJsonRefusal, withReadingOptions, type CommandIo, type ValidateFlags } from './options.js';

/** `bulkorder validate <file>`: a dry run of ingest. Heavy modules load inside the action. */
export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('validate')
    .summary('check an order file without sending anything')
    .description(
      'Reads an order file (CSV, JSON or NDJSON) and checks every row against the Business API order shape, ' +
        'without Redis or network. Prints a summary (rows, orders, valid, rejected, top error kinds) and writes ' +
        'the rejected rows, with their line and reasons, to <name>.rejects.csv beside the file (or --out).',
    )
    .argument('<file>', 'order file: .csv/.tsv/.txt, .json (array of orders or rows) or .ndjson/.jsonl');
  withExamples(
    withReadingOptions(command)
      .option('--out <path>', 'where to write rejected rows (default: <name>.rejects.csv beside the file)')
      .option(
        '--json',
        'print the summary and every error as JSON on stdout (NDJSON, one error per line, past 10,000 errors)',
      ),
    [
      'bulkorder validate samples/gift-orders.csv',
      'bulkorder validate samples/mistakes.csv --out /tmp/mistakes.rejects.csv',
      'bulkorder validate export.csv --encoding windows-1252 --map mapping.json --json',
    ],
    'Exit codes: 0 every order valid; 4 some rows rejected (see the rejects file); 3 file refused as a whole ' +
      '(unreadable, missing columns, wrong encoding, broken CSV/JSON); 2 usage error; 1 internal error.',
  ).action(async (file: string, flags: ValidateFlags) => {
    const json = flags.json === true;
    io.setExitCode(
      await withJsonRefusal(io.stdout, json, { file }, async () => {
        const [
          { validateFile },
          { ingestOptionsFromFlags },
          { validationReport },
          { ORDERS },
          { ErrorSink },
          { loadCsvOutputSettings },
        ] = await Promise.all([
          import('../ingest/validateFile.js'),
          import('../ingest/ingestFlags.js'),
          import('../ingest/validationReport.js'),
          import('../kinds/orders.js'),
          import('../ingest/errorSink.js'),
          import('../config.js'),
        ]);
        const sink = json ? new ErrorSink((text) => io.stdout.write(text)) : undefined;
        const result = await validateFile(
          file,
          {
            ...(await ingestOptionsFromFlags(flags)),
            ...(flags.out === undefined ? {} : { out: flags.out }),
            output: loadCsvOutputSettings(io.env),
            ...(sink === undefined ? {} : { onError: (error) => sink.add(error) }),
          },
          ORDERS,
        );
        io.stdout.write(validationReport(file, result, json, sink));
        return result.exitCode;
      }),
    );
  });
}
