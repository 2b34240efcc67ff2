import { execFileSync } from 'node:child_process';
import { mkdtemp, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mounts: string[] = [];

/**
 * A real small file system: a tmpfs of `size` (e.g. '64k') mounted on a fresh folder. Needs root;
 * `unmountAll()` (in afterEach) unmounts and removes every one a test mounted.
 */
export async function tmpfs(size: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch (error) {
    await rmdir(dir);
    throw error;
  }
  mounts.push(dir);
  return dir;
}

/** Unmounts and removes every tmpfs `tmpfs()` mounted and not yet unmounted. */
export async function unmountAll(): Promise<void> {
  for (const dir of mounts.splice(0)) {
    execFileSync('umount', [dir]);
    await rmdir(dir);
  }
}

/** Whether this process may mount (root): the disk cases are skipped where it may not. */
export async function canMount(): Promise<boolean> {
  try {
    await tmpfs('16k');
    await unmountAll();
    return true;
  } catch {
    return false;
  }
}
