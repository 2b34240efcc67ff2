/** What the watcher saw of one inbox entry. */
export interface FileSighting {
  size: number;
  mtimeMs: number;
}

/**
 * Decides when an upload is complete without a rename to tell us: a file is ready once its size
 * and modification time have not changed for `stableMs`, seen by this watcher. A file that is
 * still growing keeps resetting its clock. The clock is passed in, so the rule is testable.
 */
export class FileStability {
  private readonly seen = new Map<string, FileSighting & { since: number }>();

  constructor(private readonly stableMs: number) {}

  /** Records a sighting; true when the file has been unchanged for `stableMs`. */
  observe(name: string, sighting: FileSighting, now: number): boolean {
    const last = this.seen.get(name);
    if (last === undefined || last.size !== sighting.size || last.mtimeMs !== sighting.mtimeMs) {
      this.seen.set(name, { ...sighting, since: now });
      return this.stableMs <= 0;
    }
    return now - last.since >= this.stableMs;
  }

  /** Forgets names no longer in the inbox (taken, removed or renamed). */
  keepOnly(names: ReadonlySet<string>): void {
    for (const name of this.seen.keys()) if (!names.has(name)) this.seen.delete(name);
  }
}
