import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';

/** How a parent runs its worker processes (`bulkorder worker --processes N`). */
export interface WorkerProcessesOptions {
  /** How many worker processes to keep running. */
  count: number;
  /** The script each child runs (the CLI) and the arguments of child `slot` (0..count-1): the same command with `--processes 1`. */
  script: string;
  argsFor(slot: number): readonly string[];
  /** How long SIGTERM lets the children finish requests in flight (BULKORDER_SHUTDOWN_GRACE_MS). */
  graceMs: number;
  logger: Logger;
  /**
   * The CLI's stop policy (src/commands/stopPolicy.ts): `stop` runs at SIGTERM/SIGINT, and the
   * process ends `graceMs` later whatever is open. Without it, the supervisor listens itself.
   */
  stop?: { graceful(stop: (signal: string) => void, graceMs: number): () => void };
  /** Restarts of crashed children allowed within `restartWindowMs` before the parent gives up; default 5 per minute. */
  maxRestarts?: number;
  restartWindowMs?: number;
}

/** `auto` (one process per core) or a count from 1 to 999, from --processes or BULKORDER_WORKER_PROCESSES. */
export function workerProcessCount(value: number | string): number {
  if (value === 'auto') return availableParallelism();
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 999) {
    throw new UsageError('USAGE', `--processes must be 'auto' or a whole number from 1 to 999, not '${value}'`);
  }
  return count;
}

/** Extra time after the grace period for a child to close its connections before it is killed. */
const CLOSE_MARGIN_MS = 5_000;

/**
 * Runs `count` worker processes (node:child_process fork) and supervises them until SIGTERM or
 * SIGINT: the signal reaches every child as SIGTERM (each finishes its requests in flight within
 * the grace period), and the parent returns when all have exited (any still running after the
 * grace period and a margin are killed). A child that dies on its own is restarted, up to
 * `maxRestarts` in `restartWindowMs`; one that exits before it reported started (`reportStarted`:
 * a port in use, a refused configuration) is not (the next would fail the same way): the parent
 * names it, stops the others and returns its exit code.
 * The children share the token and the ledger through Redis, as separate hosts do; a child also
 * stops when the parent's IPC channel closes (the parent was killed), see `stopWhenOrphaned`.
 */
export async function runWorkerProcesses(options: WorkerProcessesOptions): Promise<number> {
  const { logger } = options;
  const maxRestarts = options.maxRestarts ?? 5;
  const windowMs = options.restartWindowMs ?? 60_000;
  const children = new Set<ChildProcess>();
  const mayRestart = restartBudget(maxRestarts, windowMs);
  let stopping = false;
  let exitCode: number = ExitCode.ok;
  let allExited: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allExited = resolve));

  const stopAll = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(
      { reason, processes: children.size },
      'stopping worker processes: no new jobs; finishing requests in flight',
    );
    for (const child of children) child.kill('SIGTERM');
    killAfter(children, options.graceMs + CLOSE_MARGIN_MS, logger);
    if (children.size === 0) allExited();
  };

  const start = (slot: number) => {
    const args = options.argsFor(slot);
    const child = fork(options.script, [...args], { stdio: 'inherit' });
    children.add(child);
    let ready = false;
    child.on('message', (message) => {
      if (isReadyMessage(message)) ready = true;
    });
    logger.info({ childPid: child.pid, slot }, 'worker process started');
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (stopping) {
        if (children.size === 0) allExited();
        return;
      }
      if (!ready) {
        // It never started (a port in use, a bad TLS file, a refused configuration): a restart
        // would fail the same way, and running on with fewer processes would hide it.
        const which = childName(slot, child, args);
        logger.error(
          { childPid: child.pid, slot, code, signal },
          `${which} failed to start (exit ${code ?? signal}); stopping the others`,
        );
        exitCode = code !== null && code !== 0 ? code : ExitCode.internal;
        stopAll(`${which} failed to start`);
        return;
      }
      logger.error({ childPid: child.pid, code, signal }, 'worker process ended on its own');
      if (code === ExitCode.usage) {
        exitCode = ExitCode.usage;
        stopAll('a worker process refused its configuration');
        return;
      }
      if (!mayRestart()) {
        exitCode = ExitCode.internal;
        stopAll(`more than ${maxRestarts} worker process restarts within ${windowMs} ms`);
        return;
      }
      start(slot);
    });
  };

  const onSignal = (signal: string) => stopAll(signal);
  // The children get the grace period and the margin to close before they are killed, and the
  // supervisor a little more to see them go.
  const withdraw = options.stop?.graceful(onSignal, options.graceMs + 2 * CLOSE_MARGIN_MS);
  if (withdraw === undefined) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  try {
    for (let slot = 0; slot < options.count; slot++) start(slot);
    await done;
  } finally {
    withdraw?.();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  return exitCode;
}

/** Kills (SIGKILL) the children still running `afterMs` from now, each named in the log. */
function killAfter(children: ReadonlySet<ChildProcess>, afterMs: number, logger: Logger): void {
  setTimeout(() => {
    for (const child of children) {
      logger.warn({ childPid: child.pid }, 'worker process still running after the grace period; killing it');
      child.kill('SIGKILL');
    }
  }, afterMs).unref();
}

/** A child as a person finds it: its slot, pid and, when it serves one, its `--http-port`. */
function childName(slot: number, child: ChildProcess, args: readonly string[]): string {
  const port = args.lastIndexOf('--http-port'); // the last one wins, as the CLI reads it
  return `worker process ${slot} (pid ${child.pid}${port >= 0 ? `, --http-port ${args[port + 1]}` : ''})`;
}

/**
 * Restarts of crashed children, at most `max` within any `windowMs`: each call asks for one, and
 * is true (and counts it) when it fits.
 */
function restartBudget(max: number, windowMs: number): () => boolean {
  const restarts: number[] = [];
  return () => {
    const now = Date.now();
    // An empty list has nothing to drop: Infinity is never older than the window.
    while ((restarts[0] ?? Infinity) < now - windowMs) restarts.shift();
    if (restarts.length >= max) return false;
    restarts.push(now);
    return true;
  };
}

/** What a forked worker process sends its supervisor once it takes jobs. */
const READY = 'bulkorder-worker-ready';

function isReadyMessage(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { event?: unknown }).event === READY;
}

/** In a forked worker process: tells the supervisor it started (a child that exits before this failed to start). No-op otherwise. */
export function reportStarted(): void {
  process.send?.({ event: READY });
}

/**
 * In a forked worker process: calls `stop` when the parent's IPC channel closes (the parent was
 * killed without passing SIGTERM on), so no worker outlives its supervisor. No-op in a process
 * that was not forked.
 */
export function stopWhenOrphaned(stop: () => void): void {
  if (process.send === undefined) return;
  process.once('disconnect', stop);
  // The IPC channel must not keep a worker alive that has stopped on its own.
  process.channel?.unref();
}
