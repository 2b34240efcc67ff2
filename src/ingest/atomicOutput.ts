import { rename, rm, stat } from 'node:fs/promises';

/** Where an output is written until it is complete, and how it then takes (or gives up) its real name. */
export interface AtomicOutput {
  /** Write here. */
  readonly writePath: string;
  /** Gives the complete file its real name. */
  commit(): Promise<void>;
  /** Removes what was written (a failed run leaves no half file under any name). */
  discard(): Promise<void>;
}

/**
 * A file written under `<path>.partial-<pid>` and renamed when complete, so a crash or a full
 * disk never leaves a file cut mid-row under its real name. A path that exists and is not a
 * regular file (/dev/stdout, a pipe) is written directly: it cannot be renamed onto.
 */
export async function atomicOutput(path: string): Promise<AtomicOutput> {
  const info = await stat(path).catch(() => undefined);
  if (info !== undefined && !info.isFile())
    return { writePath: path, commit: async () => undefined, discard: async () => undefined };
  const partial = `${path}.partial-${process.pid}`;
  return {
    writePath: partial,
    commit: () => rename(partial, path),
    discard: () => rm(partial, { force: true }),
  };
}
