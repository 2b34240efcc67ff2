import { randomBytes } from 'node:crypto';
import { lstat, mkdir, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { writeFileAtomic } from '../files/atomicFile.js';
import { moveFile } from '../files/moveFile.js';
import type { WriteFailure } from '../files/writeFailure.js';

/** The four folders of a drop folder, resolved (symlinks followed once, at start). */
export interface DropFolder {
  root: string;
  /** Where people and systems put files. */
  inbox: string;
  /** Files a watcher has claimed (by an atomic rename into its folder `processing/watcher-<id>/`) and works on; their sidecars are dotfiles beside them. */
  processing: string;
  /**
   * Files whose batches settled, with `.results.csv`, `.rejects.csv` and `.summary.json`; one with rejected rows,
   * dead letters or held orders also with a `.needs-attention` note saying what and how to act on it.
   */
  done: string;
  /** Files refused as a whole, with a `.summary.json` saying why. */
  failed: string;
}

/** What is written beside a file: results and rejects of its import, the summary, and the needs-attention note. */
export type Sidecar = 'results' | 'rejects' | 'summary' | 'attention';
export const SIDECAR_EXT: Readonly<Record<Sidecar, string>> = {
  results: '.results.csv',
  rejects: '.rejects.csv',
  summary: '.summary.json',
  attention: '.needs-attention',
};

/**
 * Upload tools write under a temporary name and rename when done: such names (and dotfiles,
 * which rsync and editors use) are never taken, so a half-written upload is left alone.
 */
const IN_PROGRESS = /\.(tmp|part|partial|filepart|crdownload|swp)$/i;

/** What a drop folder that refuses a write means: the file stays where it was and is tried again. */
const WATCH_WRITE: WriteFailure = {
  code: 'WATCH_WRITE_FAILED',
  then: 'The file stays in processing/ and the watcher tries it again; what was queued is not sent twice.',
};

/** Creates the layout if missing; the root is resolved once so every later path stays inside it. */
export async function openDropFolder(dir: string): Promise<DropFolder> {
  await mkdir(dir, { recursive: true });
  const root = await realpath(dir);
  const folder: DropFolder = {
    root,
    inbox: join(root, 'inbox'),
    processing: join(root, 'processing'),
    done: join(root, 'done'),
    failed: join(root, 'failed'),
  };
  for (const sub of [folder.inbox, folder.processing, folder.done, folder.failed]) {
    await mkdir(sub, { recursive: true });
    // A subfolder that is a link would move files outside the folder, or across file systems (no atomic rename).
    if (!(await lstat(sub)).isDirectory())
      throw new UsageError('WATCH_FOLDER_INVALID', `${sub} must be a folder inside ${root}, not a link or a file.`);
  }
  return folder;
}

/** True for names a watcher never takes from the inbox (uploads still in progress, hidden files). */
export function isInProgressName(name: string): boolean {
  return name.startsWith('.') || name.startsWith('~$') || IN_PROGRESS.test(name);
}

/**
 * The name a claimed file gets: `<UTC time>-<random>.<original name>`. Unique, so a file uploaded
 * again under the same name never overwrites one in processing/ or done/, and sortable by time.
 */
export function newClaimName(original: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}.${original}`;
}

const CLAIM_NAME = /^\d{8}T\d{6}Z-[0-9a-f]{6}\./;

/** `20261122T020000Z-1a2b3c.orders.csv` -> `orders.csv`. */
export function originalName(claim: string): string {
  return claim.replace(CLAIM_NAME, '');
}

/** True for a name newClaimName made (and so for no watcher folder in processing/). */
export function isClaimName(name: string): boolean {
  return CLAIM_NAME.test(name);
}

/**
 * Claims a file by renaming it from inbox/ into `folder.processing` (the claiming watcher's own
 * folder, src/watch/watcherClaims.ts). rename(2) is atomic: when two watchers race for the same
 * file exactly one rename succeeds; the other finds it gone.
 */
const CLAIM_WRITE: WriteFailure = {
  code: 'WATCH_WRITE_FAILED',
  then: 'The file stays in inbox/ and is taken once the folder can be written.',
};

export async function claimFile(folder: DropFolder, name: string): Promise<string | undefined> {
  const claim = newClaimName(name);
  // Another watcher took it first: not there any more.
  return (await moveFile(join(folder.inbox, name), join(folder.processing, claim), CLAIM_WRITE, { missingOk: true }))
    ? claim
    : undefined;
}

/** Where a sidecar of a claimed file is written while it is processed: a dotfile beside it. */
export function workingSidecar(folder: DropFolder, claim: string, kind: Sidecar): string {
  return join(folder.processing, `.${claim}${SIDECAR_EXT[kind]}`);
}

/** Where a sidecar of a claimed file is once the file is moved to done/ or failed/ (the file's whole name kept). */
export function filedSidecar(folder: DropFolder, claim: string, kind: Sidecar, to: 'done' | 'failed'): string {
  return join(folder[to], `${claim}${SIDECAR_EXT[kind]}`);
}

/** Writes the summary under a temporary name and renames it, so it is whole or absent. */
export async function writeSummary(folder: DropFolder, claim: string, summary: object): Promise<void> {
  await writeSidecarText(folder, claim, 'summary', JSON.stringify(summary, null, 2) + '\n');
}

/** Writes a text sidecar (summary, needs-attention note) whole or not at all: a temporary name, then a rename. */
export async function writeSidecarText(folder: DropFolder, claim: string, kind: Sidecar, text: string): Promise<void> {
  await writeFileAtomic(workingSidecar(folder, claim, kind), text, WATCH_WRITE);
}

/**
 * Moves a claimed file and its sidecars to done/ or failed/. Sidecars go first and the file last,
 * so a file found in done/ always has its sidecars, and a crash in between leaves the file in
 * processing/, where the next watcher picks it up and finishes the move.
 */
export async function moveClaimed(folder: DropFolder, claim: string, to: 'done' | 'failed'): Promise<string> {
  const target = folder[to];
  for (const kind of Object.keys(SIDECAR_EXT) as Sidecar[]) {
    // The claim's whole name, extension kept (x.csv.results.csv), as `import` names its outputs.
    await moveFile(workingSidecar(folder, claim, kind), filedSidecar(folder, claim, kind, to), WATCH_WRITE, {
      missingOk: true,
    });
  }
  const destination = join(target, claim);
  await moveFile(join(folder.processing, claim), destination, WATCH_WRITE);
  return destination;
}

/** Removes a working sidecar (e.g. a rejects file from an import that is run again). */
export async function dropSidecar(folder: DropFolder, claim: string, kind: Sidecar): Promise<void> {
  await rm(workingSidecar(folder, claim, kind), { force: true });
}
