import type { Command } from 'commander';

/**
 * Declares how an input file is read: `--format`, `--delimiter`, `--encoding`, `--map`, the
 * same for every command that reads one (validate, import, accounts, watch, schedule). The values
 * are checked in one place too, src/ingest/ingestFlags.ts, which also takes aliases (cp1252, utf8).
 */
export function withReadingOptions(command: Command, whose = 'the file', mapNote = ''): Command {
  return command
    .option('--format <format>', `csv | json | ndjson (default: from the extension of ${whose})`)
    .option('--delimiter <char>', 'CSV delimiter: "," ";" "tab" or one other character (default: detected from the header)')
    .option('--encoding <name>', 'utf-8 (default) | windows-1252 | latin1, for Excel "ANSI" exports')
    .option('--map <mapping.json>', `JSON object mapping your column names to ours, e.g. {"Huisnummer": "streetNumber"}${mapNote}`)
    .option('--strict-phone', 'refuse phone numbers that are possible for their country but not known to be in use (default: accept them with a PHONE_UNVERIFIED note)')
    .option('--allow-empty', 'accept a file with no rows (default: refused, exit 3, "the file has no orders")')
    .option('--max-lines-per-order <n>', 'most product lines in one order; a larger order is refused whole, its lines named (default: 1000)');
}
