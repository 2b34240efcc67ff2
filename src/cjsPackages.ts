import { createRequire } from 'node:module';
import type * as Bullmq from 'bullmq';
import type * as Ioredis from 'ioredis';
import type * as Nodemailer from 'nodemailer';
import type * as PinoPretty from 'pino-pretty';
import type * as Piscina from 'piscina';

/**
 * bullmq and ioredis, loaded with `require` instead of `import` (their types still come from
 * `import type`). Both are CommonJS packages: an ES `import` makes Node parse each of their files
 * once more for its export names (cjs-module-lexer, following every re-export), which doubled
 * what loading them costs at the start of every command: 280-450 ms CPU by `import`, 140-170 ms
 * by `require` (measured side by side on the benchmark machine, issue 25). eslint keeps value
 * imports of the two packages out of src/ and jobs/: a single one would bring the parse back.
 * The bundled command (esbuild.config.js) drops the `createRequire` line below, so that its
 * bundler sees a free `require` and bundles both; the packages loaded on first use stay outside.
 */
const require = createRequire(import.meta.url);

export const bullmq = require('bullmq') as typeof Bullmq;
export const ioredis = require('ioredis') as typeof Ioredis;

/**
 * Packages only some runs need, loaded on first use (require caches them): pino-pretty for a person's terminal (JSON
 * lines never pay its ~20 ms CPU a start), piscina for ingest threads (below 4 cores none start), nodemailer with SMTP
 * configured (~40 ms CPU off every worker and import without it).
 */
export const whenUsed = {
  pinoPretty: () => require('pino-pretty') as typeof PinoPretty,
  piscina: () => require('piscina') as typeof Piscina,
  nodemailer: () => require('nodemailer') as typeof Nodemailer,
};
