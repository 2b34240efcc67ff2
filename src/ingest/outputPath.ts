import { basename, dirname, join } from 'node:path';

/**
 * Where an output of an input file goes by default: beside it, the input's whole name kept
 * (`x.csv` -> `x.csv.rejects.csv`, `x.json` -> `x.json.results.csv`). Keeping the extension means
 * two inputs never share an output: `import x.csv` then `import x.json` used to overwrite each
 * other's `x.results.csv`.
 */
export function outputPath(file: string, kind: 'rejects' | 'results'): string {
  return join(dirname(file), `${basename(file)}.${kind}.csv`);
}
