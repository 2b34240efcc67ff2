import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileRefusedError } from '../errors.js';
import { writeFailure, type WriteFailure } from '../files/writeFailure.js';
import type { TargetKind } from './dashboardState.js';

/** One uploaded file waiting in the spool for its preview, its mapping and the click on Import. */
export interface Upload {
  readonly id: string;
  readonly kind: TargetKind;
  /** The name the browser gave (the batch's file name shows it). */
  readonly name: string;
  /** The spooled copy: `<spool>/<id>/<name>`. */
  readonly path: string;
  readonly bytes: number;
  readonly at: number;
  /** The header mapping chosen on the mapping step (or the saved one), as `--map` takes it. */
  mapping?: Record<string, string>;
}

/** What an upload the spool could not store means: nothing was imported. */
const SPOOL_WRITE: WriteFailure = {
  code: 'UPLOAD_WRITE_FAILED',
  then: "Nothing was imported: free space in the dashboard's temp folder (TMPDIR) and upload the file again.",
};

/** An upload is forgotten (and its file removed) this long after it arrived unless imported first. */
const UPLOAD_TTL_MS = 60 * 60 * 1000;

/**
 * The dashboard's private spool: every upload in a folder of its own under one 0700 folder made
 * at start (mkdtemp), removed when the upload is imported, when it expires, and when the dashboard
 * stops. The body is streamed to disk and refused past `maxBytes`, so an upload never sits in memory.
 */
export class UploadSpool {
  readonly #uploads = new Map<string, Upload>();
  #root: string | undefined;

  constructor(readonly maxBytes: number) {}

  /** Streams `body` into the spool; refuses (exit-3 meaning, FILE_TOO_LARGE / FILE_EMPTY) past the cap or when empty. */
  async receive(body: ReadableStream<Uint8Array> | null, name: string, kind: TargetKind): Promise<Upload> {
    await this.#expire();
    const safeName =
      basename(name)
        .replace(/[^\p{L}\p{N}._ -]/gu, '_')
        .slice(0, 120) || 'upload.csv';
    // A full or read-only temp folder names the upload, never the spool's path (the answer goes to a browser).
    const spoolFailed = (error: unknown) => writeFailure(safeName, error, SPOOL_WRITE);
    const id = randomBytes(9).toString('base64url');
    let dir: string;
    try {
      this.#root ??= await mkdtemp(join(tmpdir(), 'bulkorder-upload-'));
      dir = await mkdtemp(join(this.#root, `${id}-`));
    } catch (error) {
      throw spoolFailed(error);
    }
    const path = join(dir, safeName);
    let bytes = 0;
    const cap = this.maxBytes;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        if (bytes > cap)
          done(
            new FileRefusedError(
              'FILE_TOO_LARGE',
              safeName,
              `larger than the upload limit of ${formatBytes(cap)} (BULKORDER_UPLOAD_MAX_BYTES); import it with \`bulkorder import\` instead.`,
            ),
          );
        else done(null, chunk);
      },
    });
    try {
      if (body === null) throw new FileRefusedError('FILE_EMPTY', safeName, 'the upload has no content (0 bytes).');
      await pipeline(Readable.fromWeb(body), counter, createWriteStream(path, { mode: 0o600 }));
      if ((await stat(path)).size === 0)
        throw new FileRefusedError('FILE_EMPTY', safeName, 'the upload has no content (0 bytes).');
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error instanceof FileRefusedError ? error : spoolFailed(error);
    }
    const upload: Upload = { id, kind, name: safeName, path, bytes, at: Date.now() };
    this.#uploads.set(id, upload);
    return upload;
  }

  get(id: string): Upload | undefined {
    return this.#uploads.get(id);
  }

  /** Forgets an upload and removes its file (after its import, or when abandoned). */
  async remove(id: string): Promise<void> {
    const upload = this.#uploads.get(id);
    this.#uploads.delete(id);
    if (upload !== undefined) await rm(join(upload.path, '..'), { recursive: true, force: true });
  }

  /** Removes the whole spool (the dashboard is stopping). */
  async close(): Promise<void> {
    this.#uploads.clear();
    if (this.#root !== undefined) await rm(this.#root, { recursive: true, force: true });
    this.#root = undefined;
  }

  async #expire(): Promise<void> {
    const old = [...this.#uploads.values()].filter((u) => Date.now() - u.at > UPLOAD_TTL_MS);
    await Promise.all(old.map((u) => this.remove(u.id)));
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round(bytes / (1024 * 1024))} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} B`;
}
