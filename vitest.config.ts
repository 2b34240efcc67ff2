import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests share one real Redis; each uses its own key prefix, but a few spawn
    // worker processes, so keep file-level parallelism modest on 2-core machines.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
