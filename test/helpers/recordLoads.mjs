// `node --import ./test/helpers/recordLoads.mjs`: appends to $LOADS_FILE the URL of every module the process
// resolves (ES imports, through a resolve hook) and, at exit, every CommonJS module in require's cache.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const out = process.env.LOADS_FILE;
if (out === undefined) throw new Error('recordLoads.mjs needs LOADS_FILE');
register('./recordLoadsHooks.mjs', import.meta.url, { data: { out } });
process.on('exit', () => {
  const require = createRequire(import.meta.url);
  appendFileSync(out, Object.keys(require.cache).join('\n') + '\n');
});
