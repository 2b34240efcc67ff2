import { openRecordSource, type IngestOptions, type RecordSchema, type RecordSource } from './openRecordSource.js';
import { ACCOUNT_COLUMNS, type AccountPayload } from './accountColumns.js';
import { accountCsvUnit, accountJsonUnit, accountUnitErrors, type AccountUnit } from './accountUnit.js';
import { assembleAccounts } from './assembleAccounts.js';

/** An employee file that passed the whole-file checks, ready to be read. */
export type AccountSource = RecordSource<AccountPayload>;

/** Employee accounts as a record kind: one row per employee, keyed by companyId + email. */
const ACCOUNT_SCHEMA: RecordSchema<AccountUnit, AccountPayload> = {
  columns: ACCOUNT_COLUMNS,
  csvUnit: accountCsvUnit,
  jsonUnit: accountJsonUnit,
  codec: () => ({ encode: (unit) => JSON.stringify(unit), decode: (line) => JSON.parse(line) as AccountUnit }),
  assemble: assembleAccounts,
  ownErrors: accountUnitErrors,
};

/**
 * Opens an employee file (CSV, JSON array or NDJSON of accounts) through the same machinery
 * as order files: same encodings, header matching, --map, record-size cap, spill files and
 * row-level errors. Throws FileRefusedError (exit 3) or UsageError (exit 2) before any item.
 */
export function openAccountSource(file: string, options: IngestOptions = {}): Promise<AccountSource> {
  return openRecordSource(file, options, ACCOUNT_SCHEMA);
}
