/**
 * `npm run docs:errors`: writes docs/errors.md from the catalogue (src/errorCodes.ts). After a
 * merge that touched the table, run it again rather than merging the generated file by hand.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { ERROR_DOCS_PATH, renderErrorDocs } from './errorDocs.js';

writeFileSync(join(projectRoot, ERROR_DOCS_PATH), renderErrorDocs());
process.stdout.write(`wrote ${ERROR_DOCS_PATH}\n`);
