import type { Command } from 'commander';
import type { SetExitCode } from './index.js';
import { loadCommandContext, withConfigFlags, type ConfigFlags } from './context.js';
import { withReadingOptions } from './readingOptions.js';
import type { IngestFlags } from '../ingest/ingestFlags.js';

interface ImportFlags extends ConfigFlags, IngestFlags {
  wait?: boolean;
  force?: boolean;
  rejects?: string;
  results?: string;
  timeout?: string;
  maxWait?: string;
}

export function register(program: Command, setExitCode: SetExitCode): void {
  const command = program
    .command('import')
    .summary('validate a file and queue its orders for delivery (--wait to follow it to the end)')
    .argument('<file>', 'order file: .csv, .json or .ndjson')
    .description(
      'Validate a file and queue its valid orders for delivery (workers send them).\n' +
        'Orders the ledger knows as delivered are skipped; rejected rows go to <name>.rejects.csv.',
    );
  withImportOptions(command, 'order')
    .addHelpText(
      'after',
      '\nExamples:\n  bulkorder import samples/gift-orders.csv --wait\n  bulkorder import nightly.csv --encoding windows-1252\n\n' +
        'Exit codes: 0 all valid and (with --wait) all delivered; 4 some rows or orders need attention\n' +
        '(rejected, dead-lettered, held); 3 file refused; 5 Redis unavailable, or --wait gave up at --max-wait\n(the reason is printed: breaker open, queue paused, no worker running); 2 usage or configuration error.',
    );
  withConfigFlags(command).action(async (file: string, flags: ImportFlags) => {
    const { runImport } = await import('./importRun.js');
    setExitCode(await runImport(file, flags, await loadCommandContext(flags)));
  });
}

/** The options `import` and `accounts import` share (`noun`: what the file holds, `order` or `account`). */
export function withImportOptions(command: Command, noun: string): Command {
  return withReadingOptions(command)
    .option('--wait', `follow the batch until every ${noun} is delivered, dead-lettered or held; then write <name>.results.csv`)
    .option('--force', `send again ${noun}s the ledger knows as delivered (explicit override)`)
    .option('--rejects <path>', 'where rejected rows go (default <name>.rejects.csv beside the input)')
    .option('--results <path>', 'with --wait: where results go (default <name>.results.csv beside the input)')
    .option('--max-wait <seconds>', 'with --wait: give up after this long, write the results so far and exit 5 with the reason (default 21600, 6 hours; the batch goes on)')
    .option('--timeout <seconds>', 'alias of --max-wait');
}

export type { ImportFlags };
