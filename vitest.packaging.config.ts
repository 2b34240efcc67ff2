import { defineConfig } from 'vitest/config';

/** `npm run test:packaging`: the Dockerfile and the packed tarball, each installed from scratch (slow; .ci/run runs it). */
export default defineConfig({
  test: {
    include: ['test/packaging/**/*.test.ts'],
    maxWorkers: 1,
    testTimeout: 600_000,
    hookTimeout: 60_000,
  },
});
