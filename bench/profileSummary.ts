/**
 * Prints the functions with the most self time in a V8 CPU profile (`node --cpu-prof`), and
 * the share per package, so a finding can quote profile lines without a GUI.
 *
 *   node --cpu-prof --cpu-prof-dir /tmp/prof dist/src/cli.js validate big.csv
 *   node dist/bench/profileSummary.js /tmp/prof/*.cpuprofile [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: profileSummary <file.cpuprofile> [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
const byPackage = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const node = byId.get(id);
  const micros = profile.timeDeltas[i] ?? 0;
  if (node === undefined) return;
  total += micros;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist\/)?/, '');
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + micros);
  const pkg =
    url === ''
      ? functionName || '(program)'
      : url.includes('node_modules/')
        ? url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')
        : url.startsWith('node:')
          ? 'node:*'
          : 'bulkorder';
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
});
const pct = (n: number): string => `${((100 * n) / total).toFixed(1).padStart(5)}%`;
process.stdout.write(`total ${(total / 1e6).toFixed(2)} s sampled\n\nby package:\n`);
for (const [name, micros] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 12))
  process.stdout.write(`${pct(micros)}  ${name}\n`);
process.stdout.write('\nby function (self time):\n');
for (const [name, micros] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 25)))
  process.stdout.write(`${pct(micros)}  ${name}\n`);
