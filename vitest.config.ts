import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Not in npm test: the Dockerfile and tarball tests install every dependency from scratch (`npm run test:packaging`);
    // the benchmark smoke test runs minutes of load (`npm run bench:smoke`, after `npm test` in .ci/run).
    exclude: [...configDefaults.exclude, 'test/packaging/**', 'test/bench/**'],
    // Tests share one real Redis; each uses its own key prefix, but a few spawn
    // worker processes, so keep file-level parallelism modest on 2-core machines.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
