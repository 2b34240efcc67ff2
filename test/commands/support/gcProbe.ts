/**
 * Preloaded (`node --import`) into a CLI process by test/commands/heapSettings.test.ts: at exit it writes how many
 * full (mark-compact) collections V8 made, to GC_COUNT_FILE.
 */
import { writeFileSync } from 'node:fs';
import { PerformanceObserver, constants, type NodeGCPerformanceDetail } from 'node:perf_hooks';

const target = process.env.GC_COUNT_FILE;
if (target !== undefined && target !== '') {
  let full = 0;
  const fullKinds = new Set([constants.NODE_PERFORMANCE_GC_MAJOR, constants.NODE_PERFORMANCE_GC_INCREMENTAL]);
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { kind } = (entry as { detail?: NodeGCPerformanceDetail }).detail ?? {};
      if (kind !== undefined && fullKinds.has(kind)) full++;
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('exit', () => writeFileSync(target, String(full)));
}
