import type { RowError } from './types.js';
import { ExitCode } from '../errors.js';
import type { IngestOptions, RecordSource } from './openRecordSource.js';
import { refuseNul } from './scanFile.js';
import { limitRejectionBatches, withRejectionLimit } from './rejectionLimit.js';
import { RejectsWriter } from './rejectsWriter.js';
import { ValidationSummary } from './validationSummary.js';
import { inputDialect, outputDialect } from './csvDialect.js';
import type { CsvOutputSettings } from '../config.js';

/** Options of a dry run: how to read the file, and where rejects go. */
export interface ValidateOptions extends IngestOptions {
  /** Called with every error of every rejected record (message prefixed with file:line), for `validate --json`. */
  onError?: (error: RowError) => void;
  /** Rejects file; default `<name>.rejects.csv` beside the input. */
  out?: string;
  /** How the rejects file departs from the input's dialect (BULKORDER_OUTPUT_*); default: the input's. */
  output?: CsvOutputSettings;
}

/** The outcome of a dry run. */
export interface ValidateResult {
  source: RecordSource<unknown>;
  summary: ValidationSummary;
  /** Set when at least one row was rejected. */
  rejectsPath: string | undefined;
  /** 0 when every order is valid, 4 when some rows were rejected. */
  exitCode: typeof ExitCode.ok | typeof ExitCode.needsAttention;
}

/** What a dry run needs of a record kind: its reader and its noun (a RecordKind, src/kinds/, is one). */
export interface ValidateKind {
  openSource(file: string, options: IngestOptions): Promise<RecordSource<unknown>>;
  /** `order` or `account`, for the summary. */
  readonly noun: string;
}

/**
 * Reads a whole file through validation without sending anything, writing rejected rows to the
 * rejects file. Throws FileRefusedError for a file refused as a whole (exit 3), also when more than
 * `maxRejectedPercent` of its first 10,000 rows are rejected.
 */
export async function validateFile(
  file: string,
  options: ValidateOptions,
  kind: ValidateKind,
): Promise<ValidateResult> {
  const source = await kind.openSource(file, withRejectionLimit(options)); // a mostly wrong file stops early
  refuseNul(file, await source.scan()); // as import does: a NUL anywhere refuses the whole file
  const summary = new ValidationSummary(10, kind.noun);
  const rejects = new RejectsWriter(options.out ?? RejectsWriter.defaultPath(file), source.columns, {
    dialect: outputDialect(inputDialect(source), options.output),
  });
  try {
    // A mostly wrong file is refused (TOO_MANY_REJECTED) before its rejects are written.
    const judged = limitRejectionBatches(source.batches(), file, options.maxRejectedPercent, { holdValid: false });
    for await (const batch of judged) {
      for (const item of batch) {
        summary.add(item);
        if (item.kind === 'rejected') {
          await rejects.write(item);
          for (const error of item.errors)
            options.onError?.({ ...error, message: `${item.file}:${error.line}: ${error.message}` });
        }
      }
    }
  } catch (error) {
    await rejects.abort();
    throw error;
  }
  await rejects.close();
  // Rows read, not rows kept: an order over the maximum of lines keeps only its first row.
  summary.rows = source.stats().rows;
  return {
    source,
    summary,
    rejectsPath: rejects.rowsWritten > 0 ? rejects.path : undefined,
    exitCode: summary.rejected > 0 ? ExitCode.needsAttention : ExitCode.ok,
  };
}
