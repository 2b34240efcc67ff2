import { randomBytes } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode, isBulkorderError, type BulkorderError } from '../errors.js';
import type { IngestOptions } from '../ingest/openOrderSource.js';
import type { Logger } from '../logger.js';
import { failoverClock, type FailoverClock } from '../redis.js';
import type { Services } from '../services.js';
import { claimFile, isInProgressName, openDropFolder, type DropFolder } from './dropFolder.js';
import { claimFolderTarget, type FolderTarget } from './folderTarget.js';
import { inboxNames } from './inboxNames.js';
import { FileStability } from './fileStability.js';
import { isOpenForWriting } from './openForWriting.js';
import { processClaimedFile, type FileSummary, type ProcessOutcome } from './processClaimedFile.js';
import { WatcherClaims, type HeldClaim } from './watcherClaims.js';

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
  /** A watcher whose heartbeat is this old is dead and its files are taken over; default 30 s. */
  lockMs?: number;
  /** Return once the inbox holds nothing to take and every file this watcher took is finished. */
  once?: boolean;
  /** How files are read (--format, --delimiter, --encoding, --map); the same for every file. */
  ingest?: IngestOptions;
  /** Stops the watcher: no new files; files being followed stay in processing/ and resume later. */
  signal?: AbortSignal;
  /** With `once`: told (a sentence) when the watcher waits for files another watcher holds. */
  onWaiting?: (message: string) => void;
}

export interface WatchDeps<P> {
  /** The services of the kind the folder's files hold (orders). */
  services: Services<P>;
  /** The API those services send to: the folder is bound to it, and a watcher of another is refused (exit 2). */
  target: FolderTarget;
  logger: Logger;
}

/** What a watcher did, for `--once` and tests. */
export interface WatchReport {
  folder: DropFolder;
  done: string[];
  failed: string[];
  /** The summary of every file finished (done or failed), in the order they finished: `.summary.json`'s content. */
  files: FileSummary[];
  needsAttention: number;
  /** With `once`: files left in processing/ by another watcher whose heartbeat did not lapse in time. */
  unclaimed: string[];
  /** Files a stop (`signal`) left in processing/ unfinished: the next watcher resumes them. */
  interrupted: string[];
}

/**
 * `bulkorder watch`: takes complete files from inbox/ by an atomic rename into its own folder in
 * processing/, imports each, follows its batch until every order settles, then moves it with its
 * results, rejects and summary to done/ (or failed/ when refused as a whole). Any number of
 * watchers of one target may share a folder (a watcher of another target is refused); the files of
 * a watcher that died (its heartbeat lapsed) are taken over, and the ledger makes a second import
 * of them send nothing twice.
 */
export async function watchFolder<P>(options: WatchOptions, deps: WatchDeps<P>): Promise<WatchReport> {
  const folder = await openDropFolder(options.dir);
  await claimFolderTarget(folder.root, deps.target);
  const stableMs = options.stableMs ?? 5 * SECOND;
  const maxActive = options.maxActive ?? 4;
  const watcherId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const claims = await WatcherClaims.open(folder, watcherId, options.lockMs ?? 30 * SECOND);
  const stability = new FileStability(stableMs);
  const stop = new AbortController();
  options.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const log = deps.logger.child({ watcher: watcherId, folder: folder.root });
  const run: WatchRun<P> = {
    options,
    deps,
    claims,
    watcherId,
    log,
    stop,
    pollMs: options.pollMs ?? SECOND,
    report: { folder, done: [], failed: [], files: [], needsAttention: 0, unclaimed: [], interrupted: [] },
    lost: new Map(),
    active: new Map(),
    heldSince: undefined,
    failover: failoverClock(deps.services.redis),
  };
  const { active, pollMs, report } = run;
  log.info({ stableMs, maxActive }, 'watching the drop folder');

  const start = (claim: string): void => {
    const task = workOn(run, claim).finally(() => active.delete(claim));
    active.set(claim, task);
  };

  const heartbeat = startHeartbeat(run);
  try {
    while (!stop.signal.aborted) {
      // Files of this watcher not being worked on (an attempt was interrupted), then those of dead watchers.
      for (const claim of await claims.mine()) if (!active.has(claim) && active.size < maxActive) start(claim);
      const scan = await claims.scan(maxActive - active.size);
      for (const claim of scan.taken) {
        log.info({ claim }, 'resuming a file a watcher left in processing/');
        start(claim);
      }
      const waiting = await takeFromInbox(folder, stability, {
        now: Date.now(),
        room: maxActive - active.size,
        take: async (name) => {
          const claim = await claimFile(claims.own, name);
          if (claim !== undefined) start(claim); // undefined: another watcher took it first
        },
        log,
      });
      if (options.once === true && waiting === 0 && active.size === 0) {
        if (doneWaiting(run, scan.held)) break;
      } else run.heldSince = undefined;
      await sleep(pollMs, undefined, { signal: stop.signal }).catch(() => undefined);
    }
    await Promise.all(active.values());
  } finally {
    clearInterval(heartbeat);
    await claims.close();
  }
  if (run.stoppedFor !== undefined) throw run.stoppedFor;
  log.info({ done: report.done.length, failed: report.failed.length }, 'watcher stopped');
  return report;
}

/** What the files of one watcher run share: its settings, claims, stop, report and the files in progress. */
interface WatchRun<P> {
  options: WatchOptions;
  deps: WatchDeps<P>;
  claims: WatcherClaims;
  /** Identifies this watcher in summaries and logs. */
  watcherId: string;
  /** Bound to the watcher and its folder. */
  log: Logger;
  /** Aborted when the watcher stops (`signal`, or a disk failure with `once`). */
  stop: AbortController;
  /** How often the inbox is looked at (`pollMs`, default 1 s). */
  pollMs: number;
  /** Filled in as files finish. */
  report: WatchReport;
  /** Per file being worked on: aborts it when another watcher took it over. */
  lost: Map<string, AbortController>;
  /** Per file being worked on: its work, which removes it here when it ends. */
  active: Map<string, Promise<void>>;
  /**
   * With `once`: since when (ms) only files another live watcher holds were left; undefined while there is
   * other work. A dead watcher's heartbeat lapses within lockMs, so they are waited for that long (said so),
   * then reported as unclaimed.
   */
  heldSince: number | undefined;
  /**
   * With `once`: what ended the run, thrown once the watcher stopped, rather than a retry loop: the first file
   * the disk refused (full, read-only; exit 5 naming the path), or a Redis Cluster that did not serve the
   * files' slot for BULKORDER_REDIS_FAILOVER_MAX_MS (REDIS_CLUSTER_DOWN, exit 5 naming the cluster's state).
   */
  stoppedFor?: BulkorderError;
  /** How long attempts have failed for want of a Redis Cluster (a failover): `once` gives up at its limit. */
  failover: FailoverClock;
}

/** Works one claimed file to its end (or interruption) and adds how it ended to the report. */
async function workOn<P>(run: WatchRun<P>, claim: string): Promise<void> {
  const { options, deps, claims, stop, lost, log } = run;
  const aborted = new AbortController();
  const onStop = (): void => aborted.abort();
  stop.signal.addEventListener('abort', onStop, { once: true });
  lost.set(claim, aborted);
  let outcome: ProcessOutcome = { to: 'interrupted' };
  try {
    outcome = await processClaimedFile(claim, {
      ...deps,
      folder: claims.own,
      ingest: options.ingest ?? {},
      maxBytes: options.maxBytes ?? 512 * MIB,
      watcherId: run.watcherId,
      signal: aborted.signal,
    });
    run.failover.succeeded();
  } catch (error) {
    log.error({ claim, err: error }, 'could not finish a drop-folder file; it stays in processing/ and is tried again');
    // A long-running watcher tries the file again for as long as it takes (a worker waits for Redis too).
    const ending = options.once === true ? await endsOnce(run, error) : undefined;
    if (ending !== undefined) {
      run.stoppedFor ??= ending;
      stop.abort();
    }
  } finally {
    lost.delete(claim);
    stop.signal.removeEventListener('abort', onStop);
  }
  addOutcome(run.report, claim, { outcome, stopped: stop.signal.aborted });
  if (outcome.to === 'interrupted' && !stop.signal.aborted) await sleep(run.pollMs); // back off before it is retried
}

/** Adds how one file ended to the report; `stopped`: the watcher was stopping when it ended. */
function addOutcome(report: WatchReport, claim: string, ended: { outcome: ProcessOutcome; stopped: boolean }): void {
  const { outcome, stopped } = ended;
  if (outcome.to === 'done') report.done.push(claim);
  if (outcome.to === 'failed') report.failed.push(claim);
  if (outcome.to !== 'interrupted') report.files.push(outcome.summary);
  if (outcome.to !== 'interrupted' && outcome.needsAttention) report.needsAttention++;
  if (outcome.to === 'interrupted' && stopped) report.interrupted.push(claim);
}

/** The heartbeat; a file taken over meanwhile (this watcher stalled past lockMs) is left to its taker. */
function startHeartbeat<P>(run: WatchRun<P>): NodeJS.Timeout {
  const { claims, lost, log } = run;
  return setInterval(() => {
    void (async () => {
      await claims.beat();
      for (const [claim, aborted] of lost) {
        if (await claims.holds(claim)) continue;
        log.error({ claim }, 'another watcher took over a file (this one missed its heartbeat); leaving it');
        aborted.abort();
      }
    })().catch((error: unknown) => log.warn({ err: error }, 'could not touch the watcher heartbeat; trying again'));
  }, claims.ttlMs / 3);
}

/**
 * With `once`, when nothing is left but files another watcher holds: waits for them (said once)
 * until the holder's heartbeat could have lapsed, then reports them unclaimed. True: stop now.
 */
function doneWaiting<P>(run: WatchRun<P>, held: readonly HeldClaim[]): boolean {
  const { claims, log, report } = run;
  if (held.length === 0) return true;
  const now = Date.now();
  if (run.heldSince === undefined) {
    run.heldSince = now;
    const names = held.map((h) => h.path).join(', ');
    log.warn({ claims: held.map((h) => h.path), lockMs: claims.ttlMs }, 'waiting for files another watcher holds');
    run.options.onWaiting?.(
      `waiting for ${names}: another watcher holds ${held.length === 1 ? 'it' : 'them'}; if that watcher died, its heartbeat lapses within ${Math.ceil(claims.ttlMs / 1000)} s and the file is resumed here`,
    );
  } else if (now - run.heldSince > claims.ttlMs + 2 * run.pollMs) {
    report.unclaimed = held.map((h) => h.claim);
    log.warn({ claims: report.unclaimed }, 'files still held by another watcher; leaving them');
    return true;
  }
  return false;
}

/**
 * With `once`, a failure that ends the run (exit 5) instead of trying the file again: the disk refused a write,
 * or the Redis Cluster has not served for the failover limit (clusterFailover.ts `failoverClock`).
 */
async function endsOnce<P>(run: WatchRun<P>, error: unknown): Promise<BulkorderError | undefined> {
  return isWriteRefusal(error) ? error : run.failover.failed(error);
}

/** A file the disk refused (src/files/: exit 5 naming a path), as opposed to Redis or the API failing. */
function isWriteRefusal(error: unknown): error is BulkorderError {
  return (
    isBulkorderError(error) && error.exitCode === ExitCode.infrastructure && typeof error.details?.path === 'string'
  );
}

/** One look at the inbox: when, how many files it may claim, how it claims one, where it logs. */
interface InboxRound {
  now: number;
  /** Claims left before the watcher has `maxActive` files in progress. */
  room: number;
  /** Claims one file by name and starts it. */
  take: (name: string) => Promise<void>;
  log: Logger;
}

/**
 * Looks at the inbox once and claims up to `room` complete files. Returns how many entries are
 * still waiting (not in progress by name): with `--once` the watcher ends when none are left.
 */
async function takeFromInbox(folder: DropFolder, stability: FileStability, round: InboxRound): Promise<number> {
  const { now, take, log } = round;
  let room = round.room;
  const names = (await inboxNames(folder, log)).filter((name) => !isInProgressName(name)).sort();
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
    // A copy that stalled longer than --stable is still open by its writer (where /proc tells): not yet.
    if (ready && room > 0 && info.isFile() && (await isOpenForWriting(join(folder.inbox, name)))) {
      log.info({ file: name }, 'inbox file unchanged but still open for writing; waiting for its writer to close it');
      continue;
    }
    if (ready && room > 0) {
      room--;
      await take(name);
    }
  }
  return waiting;
}
