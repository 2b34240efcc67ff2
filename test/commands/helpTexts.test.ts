import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli.js';
import { HELP_WIDTH } from '../../src/commands/options.js';

/** Every command under `program`, with its path (`accounts dead-letters retry`). */
function allCommands(command: Command, path: string[] = []): { path: string; command: Command }[] {
  return command.commands.flatMap((sub) => {
    const here = [...path, sub.name()];
    return [{ path: here.join(' '), command: sub }, ...allCommands(sub, here)];
  });
}

/** What `bulkorder <path> --help` prints: commander's help plus the text added after it. */
function helpOf(command: Command): string {
  let out = '';
  command.configureOutput({ writeOut: (text) => (out += text), writeErr: (text) => (out += text) });
  command.outputHelp();
  return out;
}

/**
 * Lines of a paragraph broken where the next word would still have fitted: the mark of text
 * wrapped twice (hard line breaks in our text, then commander's wrapping). Paragraphs are runs of
 * lines at the left margin (descriptions, "Exit codes: ..."); headings and indented lists are not.
 */
function raggedBreaks(help: string): string[] {
  const lines = help.split('\n');
  const prose = (line: string | undefined): boolean =>
    line !== undefined && /^\S/.test(line) && !line.endsWith(':') && !line.startsWith('Usage:');
  const ragged: string[] = [];
  lines.forEach((line, i) => {
    const next = lines[i + 1];
    if (!prose(line) || !prose(next)) return;
    const word = next!.split(' ')[0]!;
    if (line.length + 1 + word.length <= HELP_WIDTH) ragged.push(`${line} | ${next}`);
  });
  return ragged;
}

describe('help texts (every command of the program src/cli.ts builds)', () => {
  const program = buildProgram('0.0.0-test', {
    stdout: process.stdout,
    stderr: process.stderr,
    env: {},
    setExitCode: () => undefined,
  });
  const commands = allCommands(program);

  it('walks the whole tree', () => {
    expect(commands.length).toBeGreaterThan(40);
    expect(commands.map((c) => c.path)).toEqual(
      expect.arrayContaining([
        'import',
        'accounts import',
        'accounts dead-letters retry',
        'review release',
        'schedule set',
      ]),
    );
  });

  it.each(commands.map((c) => [c.path, c.command] as const))(
    '%s --help: an Examples block, at most 80 columns, no ragged wrapping',
    (path, command) => {
      const help = helpOf(command);
      expect(help, path).toMatch(/\nExamples:\n {2}(bulkorder|npm) /);
      const parts = path.split(' ');
      const examples = help
        .slice(help.indexOf('\nExamples:\n'))
        .split('\n')
        .filter((line) => /^ {2}\S/.test(line));
      // Examples run the command they are shown for (a group: one of its subcommands).
      expect(examples.some((line) => line.includes(parts.join(' '))) || path === 'demo', path).toBe(true);
      expect(
        help.split('\n').filter((line) => line.length > HELP_WIDTH),
        path,
      ).toEqual([]);
      expect(raggedBreaks(help), path).toEqual([]);
      // The cause of ragged help: a hard line break inside a description commander wraps again.
      expect(command.description(), path).not.toMatch(/[^\n]\n[^\n]/);
    },
  );

  it('the program itself: examples, exit codes, 80 columns', () => {
    const help = helpOf(program);
    expect(help).toMatch(/\nExamples:\n {2}bulkorder /);
    expect(help.replace(/\s+/g, ' ')).toMatch(
      /Exit codes: 0 ok, 1 internal error, 2 usage or configuration error, 3 file refused as a whole/,
    );
    expect(help.split('\n').filter((line) => line.length > HELP_WIDTH)).toEqual([]);
    expect(raggedBreaks(help)).toEqual([]);
  });
});
