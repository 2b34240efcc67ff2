// The `bulkorder` command as it is installed: src/cli.ts and what it imports, bundled by esbuild into
// dist/bin/ (`npm run build:bin`; every build script runs it). Node resolves, reads and compiles one
// file per module: ~620 modules of ours and of node_modules for a command, about 0.2 s of CPU at every
// start (BENCHMARKS.md, round 11). Bundled, a command loads a few large files: the same code,
// compiled from the same sources, with each command's own modules still loaded on first use (split
// chunks for its dynamic imports). dist/src/ stays the library's entry (package.json `exports`).
//
//   node esbuild.config.js [outdir=dist/bin]
//
// Left out of the bundle, loaded from node_modules at run time: packages that find files of their
// own by path (pino's and piscina's worker threads, bull-board's UI, msgpackr-extract's native
// build), the OpenTelemetry packages (one copy of its API, shared with the SDK and bullmq-otel), and
// nodemailer (large, loaded only with SMTP configured).
import { build } from 'esbuild';
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
// what the free `require` loads: the line is dropped, so the banner's `require` is the one left.
const OWN_REQUIRE = /^const require = createRequire\(import\.meta\.url\);$/m;
const bundledRequire = {
  name: 'bundled-require',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]cjsPackages\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!OWN_REQUIRE.test(source))
        throw new Error(`${args.path}: its createRequire line is gone; update esbuild.config.js`);
      return { contents: source.replace(OWN_REQUIRE, ''), loader: 'ts' };
    });
  },
};

/** Bundles the CLI into `outdir`, with the Lua scripts it reads beside it (src/lua/loadScripts.ts looks beside its module). */
export async function bundleCli(outdir) {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    // unitThread: piscina's worker-thread entry, found beside the module that starts the pool (src/ingest/unitPool.ts).
    entryPoints: { bulkorder: 'src/cli.ts', unitThread: 'src/ingest/unitThread.ts' },
    outdir,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // CommonJS inside an ES module: `require` (for node: built-ins and the packages left out), `__filename` and
    // `__dirname` (read by a few packages; here they name the bundle's own file).
    banner: {
      js: [
        "import { createRequire as __bulkorderRequire } from 'node:module';",
        "import { fileURLToPath as __bulkorderPath } from 'node:url';",
        "import { dirname as __bulkorderDirname } from 'node:path';",
        'const require = __bulkorderRequire(import.meta.url);',
        'const __filename = __bulkorderPath(import.meta.url);',
        'const __dirname = __bulkorderDirname(__filename);',
      ].join(' '),
    },
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [bundledRequire],
  });
  for (const dir of ['scripts', 'includes']) cpSync(join(root, 'src/lua', dir), join(outdir, dir), { recursive: true });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleCli(resolve(root, process.argv[2] ?? 'dist/bin'));
}
