/**
 * Preloaded (`node --import`) into every process a benchmark measures: at exit it writes the
 * process's peak resident set size (KiB, from getrusage) and the CPU time it used (user and
 * system, microseconds, all its threads) to BENCH_RSS_FILE as JSON. Measuring from inside is exact
 * and needs no change to the code under test.
 */
import { writeFileSync } from 'node:fs';

const target = process.env.BENCH_RSS_FILE;
if (target !== undefined && target !== '') {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      target,
      JSON.stringify({ maxRssKiB: usage.maxRSS, userUs: usage.userCPUTime, systemUs: usage.systemCPUTime }),
    );
  });
}
