import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the Lua lives: beside this module, so src/lua/ run from source (tsx, vitest) and
 * dist/src/lua/ built. tsc copies no .lua: every build script of package.json runs `build:lua`
 * after it (the image's and the package's `build:dist` too).
 */
export const luaDir: string = dirname(fileURLToPath(import.meta.url));

/** One script as Redis runs it: its includes resolved. */
export interface LoadedScript {
  /** The file's name without `-<numKeys>.lua`: `recordFailure`. */
  name: string;
  /** The ioredis command it is defined as: `bulkorderRecordFailure`. */
  command: string;
  /** From the file name; undefined (no `-<n>`): the caller gives the number of keys first. */
  numberOfKeys: number | undefined;
  file: string;
  lua: string;
}

const INCLUDE = /^--- @include "([\w-]+)"\s*$/gm;
const FILE = /^([a-z][A-Za-z]*)(?:-(\d+))?\.lua$/;

/**
 * Every script of scripts/ (`name-<numKeys>.lua`, or `name.lua` when its number of keys varies),
 * each `--- @include "file"` line replaced by includes/file.lua, once per script (an include
 * included twice, directly or through another, is left out the second time), as BullMQ does.
 */
export function loadScripts(dir = luaDir): LoadedScript[] {
  return readdirSync(join(dir, 'scripts'))
    .filter((file) => file.endsWith('.lua'))
    .sort()
    .map((file) => {
      const match = FILE.exec(file);
      if (match === null) throw new Error(`Lua script ${file}: name it <name>-<numKeys>.lua or <name>.lua`);
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- group 1 of FILE is not optional: a match has it
      const name = match[1]!;
      const lua = resolveIncludes(readFileSync(join(dir, 'scripts', file), 'utf8'), dir, new Set(), file);
      const numberOfKeys = match[2] === undefined ? undefined : Number(match[2]);
      return { name, command: commandName(name), numberOfKeys, file, lua };
    });
}

/** `recordFailure` -> `bulkorderRecordFailure`: the prefix keeps our commands apart from BullMQ's and ioredis's. */
function commandName(name: string): string {
  return `bulkorder${name.charAt(0).toUpperCase()}${name.slice(1)}`;
}

function resolveIncludes(source: string, dir: string, seen: Set<string>, from: string): string {
  return source.replace(INCLUDE, (_, include: string) => {
    if (seen.has(include)) return '';
    seen.add(include);
    let text: string;
    try {
      text = readFileSync(join(dir, 'includes', `${include}.lua`), 'utf8');
    } catch (error) {
      throw new Error(`Lua script ${from} includes "${include}", which is not in ${join(dir, 'includes')}`, {
        cause: error,
      });
    }
    return resolveIncludes(text, dir, seen, `${include}.lua`);
  });
}
