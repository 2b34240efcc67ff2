import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { newClaimName, openDropFolder, type DropFolder } from '../../src/watch/dropFolder.js';
import { WatcherClaims } from '../../src/watch/watcherClaims.js';
import { waitFor } from '../helpers/cliProcess.js';
import { skewed, skewOf } from '../helpers/fakeTime.js';
import { ownedTempDir, removeOwnedTempDir } from '../helpers/ownedTempDir.js';

const CLAIMS_MODULE = fileURLToPath(new URL('../../src/watch/watcherClaims.ts', import.meta.url));
const FOLDER_MODULE = fileURLToPath(new URL('../../src/watch/dropFolder.ts', import.meta.url));

/**
 * A watcher's claims in another process whose wall clock is `offset` off: it opens its folder (its first
 * heartbeat), beats once more, and then beats every lockMs/3 (`live`), or exits without closing, its
 * heartbeat left behind as a SIGKILLed watcher's is (`dies`). Resolves once its heartbeat is written.
 */
async function otherWatcher(
  dir: string,
  options: { id: string; offset: string; lockMs: number; then: 'live' | 'dies' },
): Promise<ChildProcess> {
  const script = `
    const { openDropFolder } = await import(${JSON.stringify(FOLDER_MODULE)});
    const { WatcherClaims } = await import(${JSON.stringify(CLAIMS_MODULE)});
    const claims = await WatcherClaims.open(await openDropFolder(${JSON.stringify(dir)}), ${JSON.stringify(options.id)}, ${options.lockMs});
    await claims.beat();
    console.log('ready');
    if (${JSON.stringify(options.then)} === 'dies') process.exit(0);
    setInterval(() => void claims.beat(), ${Math.floor(options.lockMs / 3)});
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, ...skewed(options.offset) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout });
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => line === 'ready' && resolve());
    child.once('exit', (code) => code !== 0 && reject(new Error(`the other watcher exited ${code}`)));
  });
  return child;
}

/** A file claimed by the watcher `id` (in its folder of processing/). */
async function claimedBy(folder: DropFolder, id: string, original: string): Promise<string> {
  const claim = newClaimName(original);
  await mkdir(join(folder.processing, `watcher-${id}`), { recursive: true });
  await writeFile(join(folder.processing, `watcher-${id}`, claim), 'orderRef\n');
  return claim;
}

const children: ChildProcess[] = [];
let dir: string | undefined;
const own: WatcherClaims[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const claims of own.splice(0)) await claims.close();
  if (dir !== undefined) await removeOwnedTempDir(dir);
  dir = undefined;
});

describe('watchers sharing a drop folder judge heartbeats by one clock, not their hosts (libfaketime)', () => {
  it('a live watcher 10 min behind keeps its file: a peer with a true clock does not take it over', async () => {
    const behind = skewed('-10m');
    expect(skewOf(behind)).toBeLessThan(-9 * 60_000); // the preload works, so the test cannot pass vacuously
    dir = ownedTempDir('bulkorder-watchclock-');
    const folder = await openDropFolder(join(dir, 'drop'));
    const lockMs = 3_000;
    await otherWatcher(join(dir, 'drop'), { id: 'behind', offset: '-10m', lockMs, then: 'live' });
    const claim = await claimedBy(folder, 'behind', 'night.csv');

    const peer = await WatcherClaims.open(folder, 'true-clock', lockMs);
    own.push(peer);
    // Over two of its lock times: it beats all along, so its file stays its own at every scan.
    const scans: { taken: string[]; held: string[] }[] = [];
    const until = Date.now() + 2 * lockMs;
    while (Date.now() < until) {
      const scan = await peer.scan(10);
      scans.push({ taken: scan.taken, held: scan.held.map((h) => h.claim) });
      await new Promise((resolve) => setTimeout(resolve, lockMs / 4));
    }
    expect(scans.length).toBeGreaterThan(1);
    expect(scans.flatMap((scan) => scan.taken)).toEqual([]);
    expect(scans.every((scan) => scan.held.includes(claim))).toBe(true);
    expect(await peer.mine()).toEqual([]);
  });

  it('a watcher 10 min ahead that died: a peer with a true clock takes its file over once its lock time has passed', async () => {
    const ahead = skewed('+10m');
    expect(skewOf(ahead)).toBeGreaterThan(9 * 60_000);
    dir = ownedTempDir('bulkorder-watchclock-');
    const folder = await openDropFolder(join(dir, 'drop'));
    const lockMs = 1_000;
    await otherWatcher(join(dir, 'drop'), { id: 'ahead', offset: '+10m', lockMs, then: 'dies' });
    const claim = await claimedBy(folder, 'ahead', 'night.csv');

    const peer = await WatcherClaims.open(folder, 'true-clock', lockMs);
    own.push(peer);
    const taken: string[] = [];
    // A bound for a hang: the host clocks would keep its heartbeat "fresh" for 10 minutes.
    await waitFor(
      async () => (taken.push(...(await peer.scan(10)).taken), taken.length > 0),
      'the file taken over',
      60_000,
    );
    expect(taken).toEqual([claim]);
    expect(await peer.mine()).toEqual([claim]);
  });
});
