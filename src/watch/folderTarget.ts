import { randomBytes } from 'node:crypto';
import { writeFailure } from '../files/writeFailure.js';
import { link, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { targetId } from '../target.js';

/** The API a drop folder's files are sent to: environment, API base URL and client id (src/target.ts). */
export interface FolderTarget {
  readonly env: string;
  readonly apiBaseUrl: string;
  readonly clientId: string;
}

/** What `.bulkorder-target.json` in a drop folder's root holds. */
interface TargetRecord extends FolderTarget {
  readonly targetId: string;
  readonly since: string;
  readonly recordedBy: string;
}

/** The file in a drop folder's root that says which target the folder serves. */
const TARGET_FILE = '.bulkorder-target.json';

/**
 * Binds a drop folder to one target, or refuses a watcher of another one (exit 2, naming the
 * owner). The record is created with link(2), which fails when the name exists, so of two
 * watchers of different targets starting together exactly one records its target; Redis plays no
 * part, so it holds across namespaces and Redis instances (issue 26: one share, two targets).
 */
export async function claimFolderTarget(root: string, target: FolderTarget): Promise<void> {
  const path = join(root, TARGET_FILE);
  const mine: TargetRecord = {
    ...publicTarget(target),
    targetId: targetOf(target),
    since: new Date().toISOString(),
    recordedBy: `${hostname()}-${process.pid}`,
  };
  const temp = `${path}.${randomBytes(4).toString('hex')}.partial`;
  await writeFile(temp, JSON.stringify(mine, null, 2) + '\n').catch(async (error: unknown) => {
    await rm(temp, { force: true }).catch(() => undefined);
    throw writeFailure(path, error, {
      code: 'WATCH_WRITE_FAILED',
      then: 'The watcher did not start and took no file; start it again once the drop folder can be written.',
    });
  });
  try {
    await link(temp, path);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await rm(temp, { force: true });
  }
  const owner = await readRecord(path);
  if (owner?.targetId === mine.targetId) return;
  const who = owner === undefined ? 'an unreadable record' : describe(owner);
  throw new UsageError(
    'WATCH_FOLDER_OTHER_TARGET',
    `${root} serves another target: ${who}; this watcher is for ${describe(mine, false)}. Give each target its own drop folder` +
      ` (a file dropped here must reach one API only); if no watcher of that target uses the folder any more, remove ${path}.`,
  );
}

/**
 * Refuses a schedule's source inside the drop folder of another target (exit 2, naming the owner,
 * as a second watcher is refused): a file dropped for one API must never reach another. The
 * nearest folder at or above the source holding `.bulkorder-target.json` is its drop folder;
 * one of this same target is fine. Returns the refusal, or undefined.
 */
export async function otherTargetOfSource(source: string, target: FolderTarget): Promise<UsageError | undefined> {
  // Resolved as far as it exists (a glob or tonight's file does not): a link into the drop folder is inside it.
  let dir = await realpath(source).catch(() => realpath(dirname(source)).catch(() => resolve(dirname(source))));
  for (;;) {
    const path = join(dir, TARGET_FILE);
    if ((await stat(path).catch(() => undefined))?.isFile() === true) {
      const owner = await readRecord(path);
      if (owner?.targetId === targetOf(target)) return undefined;
      return new UsageError(
        'SOURCE_OTHER_TARGET',
        `${source} is inside the drop folder ${dir}, which serves another target: ` +
          `${owner === undefined ? 'an unreadable record' : describe(owner)}; this schedule is for ` +
          `${describe({ ...publicTarget(target), targetId: targetOf(target), since: '', recordedBy: '' }, false)}. ` +
          `A file dropped there must reach that API only: give the schedule a source of its own.`,
      );
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function targetOf(target: FolderTarget): string {
  return targetId(target.env, target.apiBaseUrl, target.clientId);
}

/** The base URL without user info or query: the record is readable by anyone who can drop files. */
function publicTarget(target: FolderTarget): FolderTarget {
  const url = new URL(target.apiBaseUrl);
  return { env: target.env, apiBaseUrl: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, clientId: target.clientId };
}

function describe(record: TargetRecord, origin = true): string {
  const what = `${record.env}, API ${record.apiBaseUrl}, client id ${record.clientId} (target ${record.targetId}`;
  return origin ? `${what}, recorded ${record.since} by ${record.recordedBy})` : `${what})`;
}

async function readRecord(path: string): Promise<TargetRecord | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<TargetRecord>;
    return typeof parsed.targetId === 'string' ? (parsed as TargetRecord) : undefined;
  } catch {
    return undefined;
  }
}
