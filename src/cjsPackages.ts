import { createRequire } from 'node:module';
import type * as Bullmq from 'bullmq';
import type * as Ioredis from 'ioredis';
import type * as Nodemailer from 'nodemailer';
import type * as PinoPretty from 'pino-pretty';
import type * as Piscina from 'piscina';

/**
 * CommonJS packages, each loaded with `require` on its first use (their types still come from `import type`).
 *
 * bullmq and ioredis by `require` instead of `import`: an ES `import` makes Node parse each of their files once more
 * for its export names (cjs-module-lexer, following every re-export), which doubled what loading them costs at the
 * start of every command: 280-450 ms CPU by `import`, 140-170 ms by `require` (measured side by side on the benchmark
 * machine, issue 25). eslint keeps value imports of the two packages out of src/ and jobs/: a single one would bring
 * the parse back. The bundled command (esbuild.config.js) drops the `createRequire` line below, so that its bundler
 * sees a free `require` and bundles both; the packages named in its EXTERNAL list stay outside.
 *
 * On first use, not when this module loads: a command that needs one package here pays for none of the others.
 * `validate` needs piscina's loader only; when importing this module loaded bullmq and ioredis too, its 1,000,000-row
 * run took 18% more CPU and 10 MiB more memory (BENCHMARKS.md round 15).
 */
const require = createRequire(import.meta.url);

/** A package's loader that requires it once, on its first call. */
function onFirstUse<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}

export const bullmq = onFirstUse(() => require('bullmq') as typeof Bullmq);
export const ioredis = onFirstUse(() => require('ioredis') as typeof Ioredis);
/** For a person's terminal: JSON lines never pay its ~20 ms CPU a start. */
export const pinoPretty = onFirstUse(() => require('pino-pretty') as typeof PinoPretty);
/** For ingest threads: below 4 cores none start. */
export const piscina = onFirstUse(() => require('piscina') as typeof Piscina);
/** With SMTP configured: ~40 ms CPU off every worker and import without it. */
export const nodemailer = onFirstUse(() => require('nodemailer') as typeof Nodemailer);
