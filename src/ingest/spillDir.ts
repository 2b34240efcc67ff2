import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The private folders spill files live in. They hold whole rows (personal data), so they are
 * made mode 0700 (mkdtemp), removed when the store is disposed, when the process exits or is
 * stopped by SIGINT/SIGTERM, and, if a crash (SIGKILL, out of memory) left one behind, at the
 * next start: a folder's name carries its owner's pid, and a folder whose owner is dead is removed.
 */

const PREFIX = 'bulkorder-ingest-';
const live = new Set<string>();
let hooked = false;

/** Creates `<parent>/bulkorder-ingest-<pid>-XXXXXX` (mode 0700) after sweeping stale ones from `parent`. */
export function createSpillDir(parent: string): string {
  sweepStaleSpillDirs(parent);
  const dir = mkdtempSync(join(parent, `${PREFIX}${process.pid}-`));
  live.add(dir);
  hookProcess();
  return dir;
}

/** Removes a spill folder now (idempotent). */
export function removeSpillDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  live.delete(dir);
}

/**
 * Removes spill folders in `parent` whose owning process is gone: `bulkorder-ingest-<pid>-*`
 * with no such pid, and folders of the older unnamed form once a day old. Only this user's
 * folders; returns the paths removed.
 */
export function sweepStaleSpillDirs(parent: string, now = Date.now()): string[] {
  return sweepStaleDirs(parent, PREFIX, now);
}

/**
 * Removes the folders `<prefix><pid>-*` in `parent` whose pid is not running (and `<prefix>*` without a pid once a
 * day old): private folders a process named after itself and could not remove because it was killed. Only this
 * user's, never one this process keeps; returns the paths removed.
 */
export function sweepStaleDirs(parent: string, prefix: string, now = Date.now()): string[] {
  let names: string[];
  try {
    names = readdirSync(parent).filter((name) => name.startsWith(prefix));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const path = join(parent, name);
    try {
      const info = statSync(path);
      if (!info.isDirectory() || (process.getuid !== undefined && info.uid !== process.getuid())) continue;
      const pid = /^(\d+)-/.exec(name.slice(prefix.length))?.[1];
      const stale = pid === undefined ? now - info.mtimeMs > 24 * 3600 * 1000 : !processAlive(Number(pid));
      if (!stale || live.has(path)) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

function removeAll(): void {
  for (const dir of live) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // exiting anyway
    }
  }
  live.clear();
}

/**
 * On exit, and on SIGINT/SIGTERM: remove what is left. A signal handler replaces Node's default
 * (exit at once), so when no other part of the program handles the signal, this one exits the
 * way the default would (128 + signal number); otherwise the other handler decides.
 */
function hookProcess(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', removeAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const onSignal = (): void => {
      removeAll();
      if (process.listenerCount(signal) === 1) process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    };
    process.on(signal, onSignal);
  }
}
