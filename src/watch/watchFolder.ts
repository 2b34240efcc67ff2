import { randomBytes } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IngestOptions } from '../ingest/openOrderSource.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import { ClaimLock } from './claimLock.js';
import { claimedFiles, claimFile, isInProgressName, openDropFolder, type DropFolder } from './dropFolder.js';
import { FileStability } from './fileStability.js';
import { processClaimedFile, type ProcessOutcome } from './processClaimedFile.js';

const SECOND = 1000;
const MIB = 1024 * 1024;

/** How a watcher runs. Every field but `dir` is optional. */
export interface WatchOptions {
  /** The drop folder; inbox/, processing/, done/ and failed/ are created in it if missing. */
  dir: string;
  /** A file is taken once its size and time stayed unchanged this long; default 5 s. */
  stableMs?: number;
  /** How often the inbox is looked at; default 1 s. */
  pollMs?: number;
  /** Larger files are refused (moved to failed/); default 512 MiB. */
  maxBytes?: number;
  /** Files worked on at once (each is imported, then followed until its orders settle); default 4. */
  maxActive?: number;
  /** A file's lock lapses this long after its watcher stopped renewing it; default 30 s. */
  lockMs?: number;
  /** Return once the inbox holds nothing to take and every file this watcher took is finished. */
  once?: boolean;
  /** How files are read (--format, --delimiter, --encoding, --map); the same for every file. */
  ingest?: IngestOptions;
  /** Stops the watcher: no new files; files being followed stay in processing/ and resume later. */
  signal?: AbortSignal;
}

export interface WatchDeps<P> {
  /** The services of the kind the folder's files hold (orders). */
  services: Services<P>;
  logger: Logger;
}

/** What a watcher did, for `--once` and tests. */
export interface WatchReport {
  folder: DropFolder;
  done: string[];
  failed: string[];
  needsAttention: number;
}

/**
 * `bulkorder watch`: takes complete files from inbox/ by an atomic rename into processing/,
 * imports each, follows its batch until every order settles, then moves it with its results,
 * rejects and summary to done/ (or failed/ when refused as a whole). Any number of watchers may
 * share a folder; a file found in processing/ whose watcher died (its lock lapsed) is resumed,
 * and the ledger makes a second import of it send nothing twice.
 */
export async function watchFolder<P>(options: WatchOptions, deps: WatchDeps<P>): Promise<WatchReport> {
  const folder = await openDropFolder(options.dir);
  const stableMs = options.stableMs ?? 5 * SECOND;
  const pollMs = options.pollMs ?? SECOND;
  const maxActive = options.maxActive ?? 4;
  const watcherId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const lock = new ClaimLock(deps.services.redis, deps.services.keys, watcherId, options.lockMs ?? 30 * SECOND);
  const stability = new FileStability(stableMs);
  const stop = new AbortController();
  options.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const log = deps.logger.child({ watcher: watcherId, folder: folder.root });
  const active = new Map<string, Promise<void>>();
  const report: WatchReport = { folder, done: [], failed: [], needsAttention: 0 };
  log.info({ stableMs, maxActive }, 'watching the drop folder');

  const start = (claim: string): void => {
    const task = work(claim).finally(() => active.delete(claim));
    active.set(claim, task);
  };

  const work = async (claim: string): Promise<void> => {
    const aborted = new AbortController();
    const onStop = (): void => aborted.abort();
    stop.signal.addEventListener('abort', onStop, { once: true });
    const renewal = setInterval(() => {
      void lock.renew(claim).then(
        (held) => {
          if (!held) {
            log.error({ claim }, 'lost the lock of a file (another watcher resumed it); leaving it');
            aborted.abort();
          }
        },
        () => undefined, // Redis blip: the next renewal tries again before the lock lapses
      );
    }, lock.ttlMs / 3);
    let outcome: ProcessOutcome = { to: 'interrupted' };
    try {
      outcome = await processClaimedFile(claim, { ...deps, folder, ingest: options.ingest ?? {}, maxBytes: options.maxBytes ?? 512 * MIB, watcherId, signal: aborted.signal });
    } catch (error) {
      log.error({ claim, err: error }, 'could not finish a drop-folder file; it stays in processing/ and is tried again');
    } finally {
      clearInterval(renewal);
      stop.signal.removeEventListener('abort', onStop);
      await lock.release(claim).catch(() => undefined);
    }
    if (outcome.to === 'done') report.done.push(claim);
    if (outcome.to === 'failed') report.failed.push(claim);
    if (outcome.to !== 'interrupted' && outcome.needsAttention) report.needsAttention++;
    if (outcome.to === 'interrupted' && !stop.signal.aborted) await sleep(pollMs); // back off before it is retried
  };

  while (!stop.signal.aborted) {
    // Files left in processing/ by a watcher that died: their lock has lapsed.
    for (const claim of await claimedFiles(folder)) {
      if (active.size >= maxActive) break;
      if (!active.has(claim) && (await lock.acquire(claim))) {
        log.info({ claim }, 'resuming a file left in processing/');
        start(claim);
      }
    }
    const waiting = await takeFromInbox(folder, stability, Date.now(), maxActive - active.size, async (name) => {
      const claim = await claimFile(folder, name);
      if (claim === undefined) return; // another watcher took it first
      // A fresh claim nobody else can know yet, unless another watcher's resume scan raced us to it.
      if (await lock.acquire(claim)) start(claim);
    });
    if (options.once === true && waiting === 0 && active.size === 0) break;
    await sleep(pollMs, undefined, { signal: stop.signal }).catch(() => undefined);
  }
  await Promise.all(active.values());
  log.info({ done: report.done.length, failed: report.failed.length }, 'watcher stopped');
  return report;
}

/**
 * Looks at the inbox once and claims up to `room` complete files. Returns how many entries are
 * still waiting (not in progress by name): with `--once` the watcher ends when none are left.
 */
async function takeFromInbox(folder: DropFolder, stability: FileStability, now: number, room: number, take: (name: string) => Promise<void>): Promise<number> {
  const names = (await readdir(folder.inbox)).filter((name) => !isInProgressName(name)).sort();
  stability.keepOnly(new Set(names));
  let waiting = 0;
  for (const name of names) {
    let info;
    try {
      info = await lstat(join(folder.inbox, name));
    } catch {
      continue; // gone meanwhile (another watcher took it)
    }
    waiting++;
    // Anything but a regular file is taken at once, only to be refused with a summary in failed/.
    const ready = !info.isFile() || stability.observe(name, { size: info.size, mtimeMs: info.mtimeMs }, now);
    if (ready && room > 0) {
      room--;
      await take(name);
    }
  }
  return waiting;
}
