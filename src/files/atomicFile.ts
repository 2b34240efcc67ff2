import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { writeFailure, type WriteFailure } from './writeFailure.js';

/** Where an output is written until it is complete, and how it then takes (or gives up) its real name. */
export interface AtomicOutput {
  /** Write here. */
  readonly writePath: string;
  /** Gives the complete file its real name. */
  commit(): Promise<void>;
  /** Removes what was written (a failed run leaves no half file under any name). */
  discard(): Promise<void>;
}

/** The temporary name of `path` while this process writes it. */
function partialPath(path: string): string {
  return `${path}.partial-${process.pid}`;
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
  const partial = partialPath(path);
  return {
    writePath: partial,
    commit: () => rename(partial, path),
    discard: () => rm(partial, { force: true }),
  };
}

/** Options of writeFileAtomic and openAtomicFile. */
export interface AtomicFileOptions extends WriteFailure {
  /** The file's mode; default 0o666 less the umask (0o600 for files of personal data). */
  mode?: number;
}

/**
 * Writes `data` to `path` whole or not at all (a temporary name, then a rename); a failure removes
 * the temporary file and throws writeFailure's error naming `path` (exit 5 for a full disk).
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicFileOptions,
): Promise<void> {
  const output = await atomicOutput(path);
  try {
    await writeFile(output.writePath, data, options.mode === undefined ? {} : { mode: options.mode });
    await output.commit();
  } catch (error) {
    await output.discard().catch(() => undefined);
    throw writeFailure(path, error, options);
  }
}

/** A file being written under its temporary name (openAtomicFile). */
export interface AtomicFile {
  /** The real name it takes on commit. */
  readonly path: string;
  /** The stream to write to (for pipeline()); its errors are also seen by write/commit. */
  readonly stream: WriteStream;
  /** Writes a chunk, waiting for the disk when its buffer is full; throws the failure once the disk refused. */
  write(chunk: string | Uint8Array): Promise<void>;
  /** Ends the stream and gives the file its real name; on a failure removes the temporary one and throws. */
  commit(): Promise<void>;
  /** Drops the temporary file without touching the real one (a run that failed). */
  abort(): Promise<void>;
  /** The failure (writeFailure's error) once the disk refused a write. */
  readonly failure: Error | undefined;
}

/**
 * Opens `path` for writing in pieces, whole or not at all: written under a temporary name and renamed
 * by `commit()`. The first error of the stream (a full disk, a read-only folder) becomes writeFailure's
 * error, naming `path`, thrown by the next `write` and by `commit`; no half file is left under any name.
 */
export async function openAtomicFile(path: string, options: AtomicFileOptions): Promise<AtomicFile> {
  const output = await atomicOutput(path);
  const stream = createWriteStream(output.writePath, options.mode === undefined ? {} : { mode: options.mode });
  let failure: Error | undefined;
  // An 'error' without a listener would end the process with a stack trace.
  const failed = new Promise<never>((_, reject) => {
    stream.once('error', (error) => {
      failure = writeFailure(path, error, options);
      reject(failure);
    });
  });
  failed.catch(() => undefined);
  const file: AtomicFile = {
    path,
    stream,
    get failure() {
      return failure;
    },
    async write(chunk) {
      if (failure !== undefined) throw failure;
      if (!stream.write(chunk))
        await Promise.race([new Promise<void>((resolve) => stream.once('drain', resolve)), failed]);
    },
    async commit() {
      try {
        if (failure !== undefined) throw failure;
        await Promise.race([
          new Promise<void>((resolve, reject) =>
            stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
          ),
          failed,
        ]);
        const late = file.failure; // set by the stream's 'error' meanwhile
        if (late !== undefined) throw late;
        await output.commit();
      } catch (error) {
        stream.destroy();
        await output.discard().catch(() => undefined);
        throw writeFailure(path, error, options);
      }
    },
    async abort() {
      stream.destroy();
      await output.discard().catch(() => undefined);
    },
  };
  return file;
}
