import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

export interface CliProcess {
  child: ChildProcess;
  /** Everything the process wrote to stderr (its pino log lines) and stdout. */
  output(): string;
  /** What it wrote to stdout alone (a `--json` answer). */
  stdout(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
}

const running = new Set<CliProcess>();

/** SIGKILLs every CLI process a test started and still runs (for afterEach). */
export async function killAllCli(): Promise<void> {
  const all = [...running];
  running.clear();
  for (const p of all) p.child.kill('SIGKILL');
  await Promise.all(all.map((p) => p.exited));
}

/**
 * Runs the real CLI (`src/cli.ts` through tsx) as a separate process; `nodeFlags` go to node before the script;
 * `cwd` is the project's folder unless given (tsx is found from there either way); `script`, a built command to
 * run instead (the bundle: test/commands/bundledCommand.test.ts), without tsx.
 */
export function startCli(
  args: string[],
  env: Record<string, string>,
  nodeFlags: string[] = [],
  options: { cwd?: string; script?: string } = {},
): CliProcess {
  const tsx = options.cwd === undefined ? 'tsx' : import.meta.resolve('tsx');
  const entry =
    options.script === undefined
      ? ['--import', tsx, ...nodeFlags, join(projectRoot, 'src/cli.ts')]
      : [...nodeFlags, options.script];
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: options.cwd ?? projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const cli: CliProcess = { child, output: () => output, stdout: () => stdout, exited };
  running.add(cli);
  void exited.then(() => running.delete(cli));
  return cli;
}

/** Waits until `predicate` holds, polling; throws with `what` after `timeoutMs` (generous: a bound for a hang, not a speed). */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
