import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The Dockerfile and tarball tests install every dependency from scratch: `npm run test:packaging`.
    exclude: ['test/packaging/**', 'node_modules/**'],
    // Tests share one real Redis; each uses its own key prefix, but a few spawn
    // worker processes, so keep file-level parallelism modest on 2-core machines.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
