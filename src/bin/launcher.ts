#!/usr/bin/env node
/**
 * The `bulkorder` command as installed (package.json bin: dist/bin/bulkorder.js, esbuild.config.js):
 * runs the bundled command beside it with V8's code cache (compileCache.ts). The bundle is a build
 * output (src/bin/command.ts and what it imports), found beside this file, not a module of src/.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWithCompileCache } from './compileCache.js';

runWithCompileCache(join(dirname(fileURLToPath(import.meta.url)), 'bulkorder.cjs'));
