// The `bulkorder` command as it is installed: src/cli.ts and what it imports, bundled by esbuild into
// dist/bin/ (`npm run build:bin`; every build script runs it). Node resolves, reads and compiles one
// file per module: ~620 modules of ours and of node_modules for a command, about 0.2 s of CPU at every
// start (BENCHMARKS.md, round 11). Bundled, a command loads one file: the same code, compiled from the
// same sources; each command's own modules are still run on first use (esbuild's lazy module init for a
// dynamic import). dist/src/ stays the library's entry (package.json `exports`).
//
// dist/bin/:
//   bulkorder.js    the bin (src/bin/launcher.ts): runs bulkorder.cjs with V8's code cache
//   bulkorder.cjs   the command (src/bin/command.ts and what it imports): CommonJS, since only a script
//                   compiled by node:vm can have a code cache on Node 20; whitespace and comments left
//                   out, so it is ASCII (read as one-byte text) and a quarter smaller to read
//   bulkorder-*.cache  the code cache, made here by running `--version` once (src/bin/compileCache.ts)
//   unitThread.js   piscina's worker-thread entry, found beside the bundle (src/ingest/unitPool.ts)
//   scripts/, includes/  the Lua scripts (src/lua/loadScripts.ts looks beside its module)
//
//   node esbuild.config.js [outdir=dist/bin]
//
// Left out of the bundle, loaded from node_modules at run time: packages that find files of their
// own by path (pino's and piscina's worker threads, bull-board's UI, msgpackr-extract's native
// build), the OpenTelemetry packages (one copy of its API, shared with the SDK and bullmq-otel), and
// nodemailer (large, loaded only with SMTP configured).
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));

const EXTERNAL = [
  'pino',
  'pino-pretty',
  'piscina',
  'msgpackr-extract',
  '@opentelemetry/*',
  'bullmq-otel',
  '@bull-board/*',
  'nodemailer',
];

// src/cjsPackages.ts loads bullmq and ioredis with a `require` of its own (createRequire): cheaper than an
// ES import when each package is hundreds of files. Bundled they are one file, and esbuild bundles only
// what the free `require` loads: the line is dropped, so the bundle's own `require` is the one left.
const OWN_REQUIRE = /^const require = createRequire\(import\.meta\.url\);$/m;
// Each UTF-16 unit outside ASCII written as `\uXXXX`: esbuild escapes them itself except in tagged templates
// (their raw text is kept), and the dashboard's html`...` templates hold arrows, dots and marks. hono's `html`
// reads the cooked text, in which an escape is the character; in a comment, a string, a regular expression (with
// or without the u flag) or a name it is the same character too.
const NOT_ASCII = /[^\x00-\x7f]/;
const escapeUnit = (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
const ourSources = {
  name: 'our-sources',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
      let source = readFileSync(args.path, 'utf8');
      if (/[\\/]src[\\/]cjsPackages\.ts$/.test(args.path)) {
        if (!OWN_REQUIRE.test(source))
          throw new Error(`${args.path}: its createRequire line is gone; update esbuild.config.js`);
        source = source.replace(OWN_REQUIRE, '');
      }
      return { contents: source.replace(new RegExp(NOT_ASCII, 'g'), escapeUnit), loader: 'ts' };
    });
  },
};

/** What every build below shares. */
const COMMON = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [ourSources],
};

// CommonJS inside an ES module (the worker thread's entry): `require` (for node: built-ins and the packages left
// out), `__filename` and `__dirname` (read by a few packages; here they name the bundle's own file).
const ESM_BANNER = [
  "import { createRequire as __bulkorderRequire } from 'node:module';",
  "import { fileURLToPath as __bulkorderPath } from 'node:url';",
  "import { dirname as __bulkorderDirname } from 'node:path';",
  'const require = __bulkorderRequire(import.meta.url);',
  'const __filename = __bulkorderPath(import.meta.url);',
  'const __dirname = __bulkorderDirname(__filename);',
].join(' ');

/** Bundles the CLI into `outdir`, with the Lua scripts it reads beside it and its code cache. */
export async function bundleCli(outdir) {
  rmSync(outdir, { recursive: true, force: true });
  const bundle = join(outdir, 'bulkorder.cjs');
  await build({
    ...COMMON,
    entryPoints: ['src/bin/command.ts'],
    outfile: bundle,
    format: 'cjs',
    minifyWhitespace: true,
    // `import()` made into `require()` (the modules of ours it loads stay lazy): a script run by node:vm has no
    // loader for `import()` on Node 20.
    supported: { 'dynamic-import': false },
    // `import.meta.url` (modules find files beside them): the bundle's own.
    define: { 'import.meta.url': '__bulkorderUrl' },
    banner: { js: "const __bulkorderUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  const code = readFileSync(bundle, 'latin1');
  if (NOT_ASCII.test(code)) throw new Error(`${bundle}: not ASCII (src/bin/compileCache.ts reads it as one-byte text)`);
  if (/\bimport\(/.test(code))
    throw new Error(`${bundle}: an import() is left (src/bin/compileCache.ts cannot run it)`);
  await build({
    ...COMMON,
    entryPoints: { unitThread: 'src/ingest/unitThread.ts' },
    outdir,
    format: 'esm',
    banner: { js: ESM_BANNER },
  });
  await build({ ...COMMON, entryPoints: { bulkorder: 'src/bin/launcher.ts' }, outdir, format: 'esm' });
  for (const dir of ['scripts', 'includes']) cpSync(join(root, 'src/lua', dir), join(outdir, dir), { recursive: true });
  // The code cache, made as a user's first run would make it.
  const bin = join(outdir, 'bulkorder.js');
  const made = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`${bin} --version failed:\n${made.stdout}${made.stderr}`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleCli(resolve(root, process.argv[2] ?? 'dist/bin'));
}
