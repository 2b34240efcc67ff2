/**
 * A cap on the rows of one group (orders: product lines of one orderRef), applied while a
 * bucket is read back, so a group over the cap is never held whole: its first unit stands for
 * it, cut to one row and carrying an error that names every line (as ranges).
 */
export interface GroupLimit<U> {
  /** Most rows one group may have. */
  maxRows: number;
  /** Whether a unit's group is capped (orders: orderRef groups and identical orders without orderRef; not a rejected record standing alone). */
  applies(unit: U): boolean;
  /** Start lines of a unit's rows. */
  linesOf(unit: U): readonly number[];
  /** The one unit that stands for an oversized group: `first` cut down, with an error naming `rows` and `lines`. */
  oversized(first: U, rows: number, lines: string): U;
}

/** Line numbers written as ranges (2-400001): the first 20 ranges, then how many more lines. */
export class LineRanges {
  private readonly ranges: [number, number][] = [];
  private more = 0;
  private last: [number, number] | undefined;

  add(line: number): void {
    if (this.last !== undefined && line === this.last[1] + 1) {
      this.last[1] = line;
      return;
    }
    if (this.ranges.length >= 20) {
      this.more++;
      this.last = undefined;
      return;
    }
    this.last = [line, line];
    this.ranges.push(this.last);
  }

  toString(): string {
    const text = this.ranges.map(([from, to]) => (from === to ? String(from) : `${from}-${to}`)).join(', ');
    return this.more === 0 ? text : `${text} and ${this.more} more line${this.more === 1 ? '' : 's'}`;
  }
}

/**
 * Applies a GroupLimit to the units of one bucket: count rows per group first (`count`), then
 * `take` each unit in order; units of oversized groups are absorbed (only the first is kept,
 * cut down) and come out of `finish`.
 */
export class GroupCutter<U extends { group: string; rows: readonly unknown[] }> {
  private readonly counts = new Map<string, number>();
  private readonly cut = new Map<string, { first: U; lines: LineRanges; rows: number }>();

  constructor(private readonly limit: GroupLimit<U>) {}

  count(group: string, rows: number): void {
    this.counts.set(group, (this.counts.get(group) ?? 0) + rows);
  }

  /** True when some group of the bucket is over the cap (else units need no look). */
  get any(): boolean {
    for (const rows of this.counts.values()) if (rows > this.limit.maxRows) return true;
    return false;
  }

  /** The unit to keep, or undefined when it belongs to an oversized group. */
  take(unit: U): U | undefined {
    const total = this.counts.get(unit.group) ?? 0;
    // A unit without rows (a stand-in for rows reported earlier) is kept: it cannot stand for the group.
    if (total <= this.limit.maxRows || !this.limit.applies(unit) || unit.rows.length === 0) return unit;
    let entry = this.cut.get(unit.group);
    if (entry === undefined) {
      entry = { first: unit, lines: new LineRanges(), rows: total };
      this.cut.set(unit.group, entry);
    }
    for (const line of this.limit.linesOf(unit)) entry.lines.add(line);
    return undefined;
  }

  finish(): U[] {
    const units = [...this.cut.values()].map((entry) =>
      this.limit.oversized(entry.first, entry.rows, entry.lines.toString()),
    );
    this.cut.clear();
    this.counts.clear();
    return units;
  }
}
