import type { ErrorSink } from './errorSink.js';
import type { ValidateResult } from './validateFile.js';
import { exitMeaning } from '../errors.js';

/**
 * What a dry run prints: the summary for a person, or with `json` the machine form (counts,
 * error kinds, how the file was read, the rejects file and the exit code). `validate` and
 * `accounts validate` both print it.
 */
export function validationReport(file: string, result: ValidateResult, json: boolean, sink?: ErrorSink): string {
  const { source, summary, rejectsPath } = result;
  if (json) {
    const report = {
      file,
      format: source.format,
      delimiter: source.format === 'csv' ? source.delimiter : undefined,
      encoding: source.encoding,
      ...summary.toJSON(),
      blankRows: source.blankRows(),
      ignoredColumns: source.ignoredColumns(),
      warnings: source.warnings,
      rejectsFile: rejectsPath ?? null,
    };
    // Last, as every --json ends: the exit code and what it means.
    const ending = { exitCode: result.exitCode, exitMeaning: exitMeaning(result.exitCode) };
    if (sink === undefined) return JSON.stringify({ ...report, ...ending }, null, 2) + '\n';
    // Every error: inside the report, or (many) already streamed as NDJSON lines before this one.
    if (sink.ndjson) return JSON.stringify({ report: { ...report, errorsStreamed: sink.count, ...ending } }) + '\n';
    return JSON.stringify({ ...report, errors: sink.errors(), ...ending }, null, 2) + '\n';
  }
  return summary.formatText({
    file,
    format: source.format,
    delimiter: source.delimiter,
    encoding: source.encoding,
    rejectsPath,
    ignoredColumns: source.ignoredColumns(),
    blankRows: source.blankRows(),
    warnings: source.warnings,
  });
}
