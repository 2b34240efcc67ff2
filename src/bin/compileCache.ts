/**
 * Runs the bundled command (dist/bin/bulkorder.cjs) with V8's code cache: the functions compiled while the
 * bundle's modules load, saved beside it, so that the next start deserializes them instead of parsing and
 * compiling ~5 MB of JavaScript again (BENCHMARKS.md, round 14: 0.1-0.16 s off the start of a command that loads
 * BullMQ or zod). What Node 22 does with `module.enableCompileCache()`, which Node 20 lacks.
 *
 * The cache is a cache: a missing, stale, foreign or damaged file is never used, and the command runs as
 * without it. Its name holds what it was made from (the bundle's bytes, Node's version, the platform, node's
 * flags); V8 refuses one made by another V8 or with other V8 flags (NODE_OPTIONS included); a checksum of its
 * own refuses a damaged one. A refused or missing cache is made again once the bundle's modules are loaded,
 * before the command's own flags are set (src/heapSettings.ts: V8 would refuse a cache made after), and
 * written whole or not at all (a temporary name, then a rename). Where it cannot be written (a read-only
 * install, a full disk) the command runs without it and says nothing: the build made one (esbuild.config.js).
 * It uses node's modules only, not src/files/: it runs before any of the command's code is loaded.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';

/** The arguments node gives a CommonJS module, on a line of their own (lineOffset -1 keeps the bundle's lines). */
const WRAPPER_START = '(function (exports, require, module, __filename, __dirname) {\n';
const WRAPPER_END = '\n})';
/** Bytes before the cache's data: its crc32, little-endian. */
const CHECKSUM_BYTES = 4;

type CommonJsWrapper = (
  ...args: [exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string]
) => void;

/**
 * Loads and runs `bundle` (CommonJS, ASCII only: esbuild.config.js checks both) with its code cache, and
 * writes the cache when there was none it could use.
 */
export function runWithCompileCache(bundle: string): void {
  const bytes = readFileSync(bundle);
  const cacheFile = cacheFileFor(bundle, bytes, process.execArgv);
  const cachedData = readCache(cacheFile);
  const script = new Script(WRAPPER_START + bytes.toString('latin1') + WRAPPER_END, {
    filename: bundle,
    lineOffset: -1,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const run = script.runInThisContext() as CommonJsWrapper;
  const module = { exports: {} };
  run.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  if (cachedData === undefined || script.cachedDataRejected === true) writeCache(cacheFile, script.createCachedData());
}

/** `<bundle>-<crc of its bytes>-<node version>-<platform>-<arch>-<crc of node's flags>.cache`, beside the bundle. */
function cacheFileFor(bundle: string, bytes: Uint8Array, nodeFlags: readonly string[]): string {
  const hex = (n: number): string => n.toString(16).padStart(8, '0');
  const key = [hex(crc32(bytes)), process.version, process.platform, process.arch, hex(crc32(nodeFlags.join('\0')))];
  return join(dirname(bundle), `${basename(bundle, '.cjs')}-${key.join('-')}.cache`);
}

/** The cache's data, or undefined when there is none or its checksum does not match (a damaged file). */
function readCache(file: string): Buffer | undefined {
  let stored: Buffer;
  try {
    stored = readFileSync(file);
  } catch {
    return undefined;
  }
  if (stored.length <= CHECKSUM_BYTES) return undefined;
  const data = stored.subarray(CHECKSUM_BYTES);
  return stored.readUInt32LE(0) === crc32(data) ? data : undefined;
}

/** Writes the cache whole or not at all; where the file system refuses, nothing (no trace left). */
function writeCache(file: string, data: Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const checksum = Buffer.alloc(CHECKSUM_BYTES);
  checksum.writeUInt32LE(crc32(data));
  try {
    writeFileSync(temporary, Buffer.concat([checksum, data]));
    renameSync(temporary, file);
  } catch {
    rmSync(temporary, { force: true });
  }
}
