import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScripts, luaDir } from '../../src/lua/loadScripts.js';
import { SCRIPT_ARGV } from '../../src/lua/scriptArgv.js';
import { SCRIPT_COMMANDS } from '../../src/lua/scriptCommands.js';

interface HeaderLine {
  kind: 'KEYS' | 'ARGV';
  index: number;
  /** `[i...]`: this and every later one. */
  repeats: boolean;
  names: string[];
}

/** The KEYS and ARGV lines of a script's header comment (`KEYS[1] name  what it is`, `ARGV[4...] per record: a b c`). */
function headerOf(lua: string): HeaderLine[] {
  // A script with flags (`#!lua flags=allow-oom`) has them on its first line, above the header.
  const header = /^(?:#!lua[^\n]*\n)?--\[\[([\s\S]*?)\]\]/.exec(lua)?.[1] ?? '';
  return [...header.matchAll(/^\s*(KEYS|ARGV)\[(\d+)(\.\.\.)?\]\s+(.*)$/gm)].map((m) => {
    const rest = m[4]!.trim();
    const group = /^per record:\s*(.*)$/.exec(rest);
    return {
      kind: m[1] as 'KEYS' | 'ARGV',
      index: Number(m[2]),
      repeats: m[3] !== undefined,
      names: group ? group[1]!.split(/\s+/) : [rest.split(/\s+/)[0]!],
    };
  });
}

const scripts = loadScripts();

describe('the Lua scripts and their registry (src/lua/)', () => {
  it('every .lua file is a command, and every declared command a file', () => {
    expect(scripts.map((s) => s.command).sort()).toEqual([...SCRIPT_COMMANDS].sort());
  });

  it('every include is resolved, and every include file is used', () => {
    expect(scripts.filter((s) => s.lua.includes('@include')).map((s) => s.file)).toEqual([]);
    const raw = ['scripts', 'includes'].flatMap((dir) =>
      readdirSync(join(luaDir, dir)).map((file) => readFileSync(join(luaDir, dir, file), 'utf8')),
    );
    const includes = readdirSync(join(luaDir, 'includes')).map((file) => file.replace(/\.lua$/, ''));
    expect(includes.filter((name) => !raw.some((text) => text.includes(`--- @include "${name}"`)))).toEqual([]);
  });

  for (const script of scripts) {
    it(`${script.file}: its header names each KEYS and ARGV it reads, in order`, () => {
      const lines = headerOf(script.lua);
      for (const kind of ['KEYS', 'ARGV'] as const) {
        const own = lines.filter((line) => line.kind === kind);
        // Numbered from 1 without a gap; only the last may stand for the rest.
        expect(own.map((line) => line.index)).toEqual(own.map((_, i) => i + 1));
        expect(own.slice(0, -1).some((line) => line.repeats)).toBe(false);
        const declared = own.at(-1)?.repeats === true ? Infinity : own.length;
        const used = Math.max(
          0,
          ...[...script.lua.matchAll(new RegExp(`${kind}\\[(\\d+)\\]`, 'g'))].map((m) => Number(m[1])),
        );
        expect(used, `${kind}[${used}] is read but the header declares ${own.length}`).toBeLessThanOrEqual(declared);
        if (kind === 'KEYS' && script.numberOfKeys !== undefined) expect(own.length).toBe(script.numberOfKeys);
        if (kind === 'KEYS' && script.numberOfKeys === undefined) expect(own.at(-1)?.repeats).toBe(true);
      }
      const named = (SCRIPT_ARGV as Record<string, readonly string[]>)[script.name];
      if (named !== undefined)
        expect(lines.filter((line) => line.kind === 'ARGV').flatMap((line) => line.names)).toEqual([...named]);
      expect(script.lua).toMatch(/^\s*Output:/m);
    });
  }
});
