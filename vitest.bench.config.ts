import { defineConfig } from 'vitest/config';

/** `npm run bench:smoke`: the benchmarks at --quick sizes, on their own (not part of `npm test`). */
export default defineConfig({
  test: {
    include: ['test/bench/**/*.test.ts'],
    maxWorkers: 1,
    testTimeout: 300_000,
    hookTimeout: 30_000,
  },
});
