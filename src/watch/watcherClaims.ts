import { lstat, mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { writeFailure } from '../files/writeFailure.js';
import { join } from 'node:path';
import { isClaimName, SIDECAR_EXT, type DropFolder } from './dropFolder.js';

/** Names of watcher folders in processing/; a claim's name never starts so (it starts with a time). */
const WATCHER_DIR = 'watcher-';
/**
 * The heartbeat in a watcher's folder: its mtime says the watcher was alive then. It is written, not
 * given a time (utimes), so the file system stamps it: every watcher's heartbeat, and the "now" a scan
 * compares them with (its own heartbeat's, just written), come from one clock, whatever the hosts' clocks say.
 */
const ALIVE = '.alive';

/** A claim in processing/ that another live watcher holds. */
export interface HeldClaim {
  readonly claim: string;
  /** Relative to the drop folder: `processing/watcher-<id>/<claim>`. */
  readonly path: string;
}

/**
 * Who works on a claimed file, decided in the file system alone: each watcher has its folder
 * `processing/watcher-<id>/`, a file is claimed by an atomic rename into it, and a heartbeat file
 * there is touched while the watcher lives. A watcher whose heartbeat is older than its lock time
 * (written in the heartbeat) or gone (it stopped) is dead, and its files are taken over by renaming them into the taker's
 * folder: of two takers exactly one rename succeeds. Redis plays no part, so this holds across
 * namespaces and Redis instances. The hosts' own clocks play no part either: heartbeats are stamped
 * by the file system (a shared folder's server), and so is the "now" they are compared with.
 */
export class WatcherClaims {
  private constructor(
    /** The drop folder as this watcher sees it: `processing` is its own folder. */
    readonly own: DropFolder,
    private readonly shared: DropFolder,
    private readonly dirName: string,
    readonly ttlMs: number,
  ) {}

  static async open(folder: DropFolder, watcherId: string, ttlMs: number): Promise<WatcherClaims> {
    const dirName = `${WATCHER_DIR}${watcherId.replace(/[^A-Za-z0-9._-]/g, '_')}`;
    const claims = new WatcherClaims(
      { ...folder, processing: join(folder.processing, dirName) },
      folder,
      dirName,
      ttlMs,
    );
    await claims.beat().catch((error: unknown) => {
      throw writeFailure(claims.own.processing, error, {
        code: 'WATCH_WRITE_FAILED',
        then: 'The watcher did not start and took no file; start it again once the drop folder can be written.',
      });
    });
    return claims;
  }

  /**
   * Rewrites the heartbeat (the file system stamps its mtime); recreates the folder (heartbeat first) if
   * a taker removed it while this watcher stalled.
   */
  async beat(): Promise<void> {
    try {
      await writeFile(join(this.own.processing, ALIVE), this.heartbeatText(), { flag: 'r+' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    // Built under a dot name and renamed, so no one sees this folder without its heartbeat (dead, to be removed).
    const staging = join(this.shared.processing, `.new-${this.dirName}`);
    await mkdir(staging, { recursive: true });
    await writeFile(join(staging, ALIVE), this.heartbeatText());
    try {
      await rename(staging, this.own.processing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
      await rm(staging, { recursive: true, force: true }); // the folder exists (its heartbeat only was gone)
      await writeFile(join(this.own.processing, ALIVE), this.heartbeatText());
    }
  }

  /** Claims in this watcher's folder (those it works on, and any whose attempt was interrupted). */
  async mine(): Promise<string[]> {
    return claimsIn(this.own.processing);
  }

  /** False once another watcher took the file over (this one stalled past the lock time): stop working on it. */
  async holds(claim: string): Promise<boolean> {
    return (await lstat(join(this.own.processing, claim)).catch(() => undefined)) !== undefined;
  }

  /**
   * Takes over up to `room` files of dead watchers (and files an older version left directly in
   * processing/), and lists those live watchers hold. Heartbeats are judged against the file system's
   * "now": this watcher's own, beaten first.
   */
  async scan(room: number): Promise<{ taken: string[]; held: HeldClaim[] }> {
    const now = await this.fileSystemNow();
    const candidates: { from: string; claim: string }[] = [];
    const held: HeldClaim[] = [];
    const dead: string[] = [];
    for (const entry of await readdir(this.shared.processing, { withFileTypes: true })) {
      if (entry.name === this.dirName) continue;
      if (isClaimName(entry.name)) candidates.push({ from: this.shared.processing, claim: entry.name });
      else if (entry.isDirectory() && entry.name.startsWith(WATCHER_DIR)) {
        const dir = join(this.shared.processing, entry.name);
        const claims = await claimsIn(dir);
        if (await isAlive(dir, now, this.ttlMs))
          held.push(...claims.map((claim) => ({ claim, path: `processing/${entry.name}/${claim}` })));
        else {
          candidates.push(...claims.map((claim) => ({ from: dir, claim })));
          dead.push(dir);
        }
      }
    }
    const taken: string[] = [];
    for (const { from, claim } of candidates.sort((a, b) => a.claim.localeCompare(b.claim))) {
      if (taken.length >= room) break;
      if (await this.takeOver(from, claim)) taken.push(claim);
    }
    for (const dir of dead) await removeIfEmpty(dir);
    return { taken, held };
  }

  /** Stops the heartbeat: files still here are taken over by the next watcher at once; an empty folder is removed. */
  async close(): Promise<void> {
    await rm(join(this.own.processing, ALIVE), { force: true });
    await removeIfEmpty(this.own.processing);
  }

  /** The file system's clock, read off this watcher's heartbeat written just now (the host's where it cannot be). */
  private async fileSystemNow(): Promise<number> {
    await this.beat();
    const info = await lstat(join(this.own.processing, ALIVE)).catch(() => undefined);
    return info?.mtimeMs ?? Date.now();
  }

  /** The heartbeat says how long it lasts: each watcher is judged by its own lock time, not the reader's. */
  private heartbeatText(): string {
    return JSON.stringify({ lockMs: this.ttlMs }) + '\n';
  }

  private async takeOver(from: string, claim: string): Promise<boolean> {
    try {
      await rename(join(from, claim), join(this.own.processing, claim));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false; // another watcher took it first
      throw error;
    }
    // The file decides who won; its sidecars (results, rejects, summary of the dead attempt) follow it.
    for (const ext of Object.values(SIDECAR_EXT)) {
      await rename(join(from, `.${claim}${ext}`), join(this.own.processing, `.${claim}${ext}`)).catch(() => undefined);
    }
    return true;
  }
}

async function isAlive(dir: string, now: number, fallbackTtlMs: number): Promise<boolean> {
  const path = join(dir, ALIVE);
  const info = await lstat(path).catch(() => undefined);
  if (info === undefined) return false;
  const text = await readFile(path, 'utf8').catch(() => '');
  let ttlMs = fallbackTtlMs;
  try {
    const said = (JSON.parse(text) as { lockMs?: unknown }).lockMs;
    if (typeof said === 'number' && Number.isFinite(said) && said > 0) ttlMs = said;
  } catch {
    // written by hand or cut short: the reader's own lock time
  }
  return now - info.mtimeMs <= ttlMs;
}

async function claimsIn(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).filter((name) => !name.startsWith('.')).sort();
}

/** Removes a dead watcher's folder once no claim is left in it (its heartbeat and stray partial files go with it). */
async function removeIfEmpty(dir: string): Promise<void> {
  if ((await claimsIn(dir)).length > 0) return;
  for (const name of await readdir(dir).catch(() => [] as string[])) await rm(join(dir, name), { force: true });
  await rmdir(dir).catch(() => undefined); // a claim arrived meanwhile, or another watcher removed it first
}
