/**
 * Preloaded (`node --import`) into every process a benchmark measures: at exit it writes the
 * process's peak resident set size (KiB, from getrusage) to BENCH_RSS_FILE. Measuring from
 * inside is exact and needs no change to the code under test.
 */
import { writeFileSync } from 'node:fs';

const target = process.env.BENCH_RSS_FILE;
if (target !== undefined && target !== '') {
  process.on('exit', () => writeFileSync(target, String(process.resourceUsage().maxRSS)));
}
