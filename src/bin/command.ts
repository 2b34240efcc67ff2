/**
 * The bundle's entry (dist/bin/bulkorder.cjs, esbuild.config.js): runs the command line, as src/cli.ts
 * does when node runs it. What node runs when a user types `bulkorder` is launcher.ts.
 */
import { runCommandLine } from '../cli.js';

runCommandLine();
