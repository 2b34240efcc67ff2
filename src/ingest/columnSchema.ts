/**
 * What the column machinery (resolveColumns, --map files, flat JSON rows) needs to know about
 * one kind of record: its field names, which are required, the other names it accepts, and
 * the lookalike names it may suggest. Orders (orderColumns.ts) and employee accounts
 * (src/ingest/accountColumns.ts) each have one.
 */
export interface ColumnSchema {
  /** What one record is called in messages: `order`, `account`. */
  readonly noun: string;
  /** Field names, in the order a JSON input's cells (and its rejects file) use. */
  readonly fields: readonly string[];
  /** Fields that must have a column; a file without one is refused. */
  readonly required: readonly string[];
  /** Other names that match a field silently, e.g. the API's dotted paths. */
  readonly aliases: Readonly<Partial<Record<string, readonly string[]>>>;
  /** Names (normalised) only ever suggested for a missing field, never matched silently. */
  readonly synonyms: Readonly<Partial<Record<string, readonly string[]>>>;
  /**
   * Facts about an accepted header a person should see (e.g. "no orderRef column").
   * `lookalike(field)` is the unmatched header that plausibly means `field`, if any.
   */
  warnings?(
    fieldIndex: Readonly<Partial<Record<string, number>>>,
    lookalike: (field: string) => string | undefined,
  ): string[];
}
