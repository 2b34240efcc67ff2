import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The benchmark smoke test runs minutes of load: `npm run bench:smoke` (vitest.bench.config.ts), after `npm test` in .ci/run.
    exclude: [...configDefaults.exclude, 'test/bench/**'],
    // Tests share one real Redis; each uses its own key prefix, but a few spawn
    // worker processes, so keep file-level parallelism modest on 2-core machines.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
