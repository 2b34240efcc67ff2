import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's root folder (the one holding package.json), found from this module's
 * location so it is right both from src/ (tsx, vitest) and from dist/src/ (built).
 */
export const projectRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
})();

/** The bundled sample files (README examples, demo, tests). */
export const samplesDir = join(projectRoot, 'samples');

let version: string | undefined;

/** This bulkorder's version (package.json), read once. */
export function bulkorderVersion(): string {
  version ??= (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
