/**
 * The real binary, as a shell runs it: `src/cli.ts` through node and tsx, its own process, exit
 * code, stdout and stderr. Every other CLI test runs `main` in-process (test/helpers/runCli.ts);
 * these few keep the entry point, the exit code's way to the shell and the stream split honest.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { samplesDir } from '../../src/paths.js';
import { killAllCli, startCli } from '../helpers/cliProcess.js';

afterEach(killAllCli);

async function run(args: string[]): Promise<{ code: number | string; stdout: string; output: string }> {
  const cli = startCli(args, { LOG_LEVEL: 'warn' });
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), output: cli.output() };
}

describe('the bulkorder binary', () => {
  it('--help prints usage on stdout and exits 0; an unknown command exits 2 on stderr', async () => {
    const [help, unknown] = await Promise.all([run(['--help']), run(['no-such-command'])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: bulkorder');
    expect(help.stdout).toMatch(/Exit codes: 0 /);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.output).toContain("unknown command 'no-such-command'");
  }, 120_000);

  it('validate: 0 with the summary on stdout; 4 for rejected rows; 3 for a refused file, said on stderr', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bulkorder-binary-'));
    const [valid, mistakes, refused] = await Promise.all([
      run(['validate', join(samplesDir, 'multi-line-orders.csv')]),
      run(['validate', join(samplesDir, 'mistakes.csv'), '--json', '--out', join(dir, 'mistakes.rejects.csv')]),
      run(['validate', join(samplesDir, 'excel-ansi-windows-1252.csv')]),
    ]).finally(() => rm(dir, { recursive: true, force: true }));
    expect(valid.code).toBe(0);
    expect(valid.stdout).toMatch(/orders\s+6/);
    expect(mistakes.code).toBe(4);
    expect(JSON.parse(mistakes.stdout)).toMatchObject({ rows: 21, exitCode: 4 });
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.output).toContain('--encoding windows-1252');
  }, 120_000);
});
