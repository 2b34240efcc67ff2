import type { RowError } from './types.js';

/**
 * Every error of a dry run for `validate --json`, not only the first ten. Up to `limit` errors
 * are kept and printed inside the JSON report (`errors`); past that the output becomes NDJSON,
 * so memory stays flat on a file full of mistakes: one `{"error": ...}` line per error as it is
 * found, then one `{"report": ...}` line.
 */
export class ErrorSink {
  private kept: RowError[] = [];
  private streaming = false;
  count = 0;

  constructor(
    private readonly write: (text: string) => void,
    private readonly limit = 10_000,
  ) {}

  add(error: RowError): void {
    this.count++;
    if (this.streaming) {
      this.write(JSON.stringify({ error }) + '\n');
      return;
    }
    this.kept.push(error);
    if (this.kept.length > this.limit) {
      this.streaming = true;
      for (const kept of this.kept) this.write(JSON.stringify({ error: kept }) + '\n');
      this.kept = [];
    }
  }

  /** True once the errors went out as NDJSON lines. */
  get ndjson(): boolean {
    return this.streaming;
  }

  /** The errors kept (all of them unless `ndjson`). */
  errors(): RowError[] {
    return this.kept;
  }
}
