import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { withFlagHint } from '../../src/commands/options.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEMO_FILES } from '../../src/commands/demoRun.js';
import { projectRoot } from '../../src/paths.js';

/** Issue 23's smaller CLI findings. */
function find(program: Command, path: string): Command {
  return path.split(' ').reduce((command, name) => command.commands.find((c) => c.name() === name)!, program);
}

function helpOf(command: Command): string {
  let out = '';
  command.configureOutput({ writeOut: (text) => (out += text), writeErr: (text) => (out += text) });
  command.outputHelp();
  return out;
}

function flags(command: Command): string[] {
  return command.options.map((o) => o.long ?? '');
}

describe('the CLI as a new user meets it', () => {
  const program = buildProgram('0.0.0', {
    stdout: process.stdout,
    stderr: process.stderr,
    env: {},
    setExitCode: () => undefined,
  });

  it('accounts import and validate list no order-only flag and no order example', () => {
    for (const path of ['accounts import', 'accounts validate']) {
      const command = find(program, path);
      expect(flags(command), path).not.toEqual(expect.arrayContaining(['--strict-phone']));
      expect(flags(command), path).not.toContain('--max-lines-per-order');
      expect(flags(command), path).not.toContain('--strict-products');
      const help = helpOf(command);
      expect(help, path).not.toContain('Huisnummer');
      expect(help, path).toContain('{"Voornaam": "firstName"}');
      expect(help, path).not.toContain('no orders');
    }
    // The orders' commands keep theirs.
    expect(flags(find(program, 'import'))).toEqual(
      expect.arrayContaining(['--strict-phone', '--strict-products', '--max-lines-per-order']),
    );
    expect(helpOf(find(program, 'validate'))).toContain('Huisnummer');
  });

  it('the dashboard and the simulator default to different ports', () => {
    const port = (path: string) => Number(find(program, path).options.find((o) => o.long === '--port')!.defaultValue);
    expect(port('dashboard')).toBe(8080);
    expect(port('simulator')).not.toBe(port('dashboard'));
  });

  it('--config gets "did you mean --config-file?"', () => {
    let err = '';
    const run = buildProgram('0.0.0', {
      stdout: process.stdout,
      stderr: process.stderr,
      env: {},
      setExitCode: () => undefined,
    });
    const status = find(run, 'status');
    for (const c of [run, status]) c.configureOutput({ writeErr: (text) => (err += text) });
    expect(() => run.parse(['node', 'bulkorder', 'status', '--config', '.env'])).toThrow();
    expect(err).toContain("unknown option '--config' (Did you mean --config-file?)");
    // Commander's own suggestion is left alone.
    expect(withFlagHint("error: unknown option '--config-fil'\n(Did you mean --config-file?)\n")).toBe(
      "error: unknown option '--config-fil'\n(Did you mean --config-file?)\n",
    );
  });

  it('README names the sample files the demo imports, and only those', async () => {
    const readme = (await readFile(join(projectRoot, 'README.md'), 'utf8')).replace(/\s+/g, ' ');
    const sentence = /The demo imports (.*?)\. Three more/.exec(readme)?.[1];
    expect(sentence).toBeDefined();
    expect([...sentence!.matchAll(/`([^`]+)`/g)].map((m) => m[1])).toEqual(DEMO_FILES);
    expect(readme).not.toContain('(the demo imports them)');
  });
});
