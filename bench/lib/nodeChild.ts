/**
 * Runs a script or the real CLI as a separate Node process, the way a user would, and
 * measures its wall time, peak RSS (bench/lib/peakRss.ts) and CPU time. Works both from the
 * TypeScript sources (tsx, as the tests run) and from dist/ (`npm run bench`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** True when running from the .ts sources through tsx. */
const fromSources = import.meta.url.endsWith('.ts');
const extension = fromSources ? '.ts' : '.js';
/** bench/ (or dist/bench/) and the project's compiled or source root beside it. */
const benchDir = dirname(here);
const codeRoot = dirname(benchDir);

/** Path of a bench script, e.g. `baselines/bareValidate`, in the current mode. */
export function benchScript(name: string): string {
  return join(benchDir, `${name}${extension}`);
}

/** Path of the bulkorder CLI in the current mode: src/cli.ts through tsx, or the bundled command users run (dist/bin/). */
export const cliEntry = fromSources ? join(codeRoot, 'src', 'cli.ts') : join(codeRoot, 'bin', 'bulkorder.js');

export interface ChildResult {
  code: number | string;
  stdout: string;
  stderr: string;
  wallMs: number;
  /** Peak resident set size of the child, bytes. */
  peakRssBytes: number;
  /** CPU seconds the child used, user + system, all its threads (0 when it could not tell: killed). */
  cpuSeconds: number;
}

export interface StartedChild {
  child: ChildProcess;
  /** stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process ends. */
  done: Promise<ChildResult>;
}

/** Starts `node <entry> ...args` with the peak-RSS reporter preloaded; env adds to this process's. */
export async function startNode(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
): Promise<StartedChild> {
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-bench-'));
  const rssFile = join(dir, 'rss');
  const loaders = fromSources ? ['--import', 'tsx'] : [];
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...loaders, '--import', benchScript('lib/peakRss'), ...nodeFlags, entry, ...args],
    {
      env: { ...process.env, ...env, BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  // stderr is kept bounded: a chatty process must not grow the benchmark's own memory.
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-64 * 1024)));
  const done = new Promise<ChildResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      const wallMs = performance.now() - started;
      void readFile(rssFile, 'utf8')
        .then((text) => JSON.parse(text) as { maxRssKiB: number; userUs: number; systemUs: number })
        .catch(() => ({ maxRssKiB: 0, userUs: 0, systemUs: 0 }))
        .then(async (usage) => {
          await rm(dir, { recursive: true, force: true });
          resolve({
            code: code ?? signal ?? -1,
            stdout,
            stderr,
            wallMs,
            peakRssBytes: usage.maxRssKiB * 1024,
            cpuSeconds: (usage.userUs + usage.systemUs) / 1e6,
          });
        });
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs a process to its end; throws with its stderr when it exits with a code not in `okCodes`. */
export async function runNode(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  okCodes: number[] = [0],
  nodeFlags: string[] = [],
): Promise<ChildResult> {
  const result = await (await startNode(entry, args, env, nodeFlags)).done;
  if (typeof result.code !== 'number' || !okCodes.includes(result.code)) {
    throw new Error(
      `${entry} ${args.join(' ')} exited ${result.code}:\n${result.stderr.slice(-4000)}\n${result.stdout.slice(-2000)}`,
    );
  }
  return result;
}

/** Waits for a line of stdout matching `pattern`; returns the match. */
export async function waitForOutput(
  started: StartedChild,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = started.stdout().match(pattern);
    if (match !== null) return match;
    if (started.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(
        `no ${pattern} from the child (exit ${started.child.exitCode}):\n${started.stderr().slice(-4000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Node flags that write a CPU profile of a child into BENCH_PROFILE_DIR when it is set (bench/profileSummary.ts reads them). */
export function profileFlags(): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  return dir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', dir];
}
