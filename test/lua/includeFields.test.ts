import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { luaDir } from '../../src/lua/loadScripts.js';

/**
 * The shared Lua functions (src/lua/includes/) that take many values take one table `p` of named
 * fields, listed in their header (`p.field  what it is`). A misspelt field would be nil at run time,
 * as silent as the swapped position it replaced: this holds every call site's fields, and every
 * field the function reads, equal to its header's list.
 */

/** At most this many positional parameters; more take one table. */
const MAX_POSITIONAL = 5;

interface LuaFile {
  name: string;
  raw: string;
  /** Without comments: what Redis runs. */
  code: string;
}

function withoutComments(lua: string): string {
  return lua.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--[^\n]*/g, '');
}

function read(dir: 'scripts' | 'includes'): LuaFile[] {
  return readdirSync(join(luaDir, dir)).map((file) => {
    const raw = readFileSync(join(luaDir, dir, file), 'utf8');
    return { name: `${dir}/${file}`, raw, code: withoutComments(raw) };
  });
}

/** The field names at the top level of each `fn({ ... })` call in `code` (nested tables left out). */
function callFields(code: string, fn: string): string[][] {
  const calls: string[][] = [];
  for (const match of code.matchAll(new RegExp(`\\b${fn}\\(\\{`, 'g'))) {
    let depth = 1;
    let top = '';
    let quote: string | undefined;
    for (let i = match.index + match[0].length; i < code.length && depth > 0; i++) {
      const c = code[i]!;
      if (quote !== undefined) {
        if (c === '\\') i++;
        else if (c === quote) quote = undefined;
        continue;
      }
      if (c === "'" || c === '"') quote = c;
      else if (c === '{') depth++;
      else if (c === '}') depth--;
      else if (depth === 1) top += c;
    }
    calls.push([...top.matchAll(/(?:^|,)\s*(\w+)\s*=(?!=)/g)].map((m) => m[1]!).sort());
  }
  return calls;
}

const includes = read('includes');
const everyFile = [...read('scripts'), ...includes];

describe('the shared Lua functions take many values by name (src/lua/includes/)', () => {
  it(`no include function takes more than ${MAX_POSITIONAL} positional parameters`, () => {
    const long = includes.flatMap((file) =>
      [...file.code.matchAll(/local function (\w+)\(([^)]*)\)/g)]
        .filter((m) => m[2]!.split(',').length > MAX_POSITIONAL)
        .map((m) => `${file.name}: ${m[1]}`),
    );
    expect(long).toEqual([]);
  });

  const tabled = includes.flatMap((file) =>
    [...file.code.matchAll(/local function (\w+)\(p\)/g)].map((m) => {
      const header = /^--\[\[([\s\S]*?)\]\]/.exec(file.raw)?.[1] ?? '';
      const fields = [...header.matchAll(/^\s+p\.(\w+)/gm)].map((f) => f[1]!).sort();
      return { file, fn: m[1]!, fields };
    }),
  );

  it('the functions that take a table are the ones expected', () => {
    expect(tabled.map((t) => t.fn).sort()).toEqual(['claimOne', 'moveParked', 'reserveOne', 'settleOne']);
  });

  for (const { file, fn, fields } of tabled) {
    it(`${fn}: its header lists its fields, it reads exactly those, and every caller passes exactly those`, () => {
      expect(fields.length).toBeGreaterThan(MAX_POSITIONAL);
      expect(new Set(fields).size).toBe(fields.length);
      // One table-taking function per include file, so every `p.` in its code is that function's.
      const read = [...new Set([...file.code.matchAll(/\bp\.(\w+)/g)].map((m) => m[1]!))].sort();
      expect(read).toEqual(fields);
      const calls = everyFile.flatMap((caller) =>
        callFields(caller.code, fn).map((passed) => ({ caller: caller.name, passed })),
      );
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) expect(call, call.caller).toEqual({ caller: call.caller, passed: fields });
      // Every call names its fields: no table built elsewhere and passed by a variable, no positional call left.
      const everyCall = everyFile.flatMap((caller) => [...caller.code.matchAll(new RegExp(`\\b${fn}\\(`, 'g'))]);
      expect(everyCall.length).toBe(calls.length + 1); // + its definition
    });
  }
});
