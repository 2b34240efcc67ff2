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
        'Exit codes: 0 every order delivered now or before with the same content (without --wait: all\n' +
        'valid and queued by this batch or already delivered); 4 some rows or orders need attention\n' +
        '(rejected, ORDER_REF_REUSED, dead-lettered, held) or are not finished (queued by another batch\n' +
        'without --wait, or still pending at --timeout); 3 file refused; 5 Redis unavailable; 2 usage error.',
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
    .option('--timeout <seconds>', 'with --wait: stop following after this long (the batch goes on)');
}

export type { ImportFlags };
