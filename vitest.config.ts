import { configDefaults, defineConfig } from 'vitest/config';
import { faultFiles } from './test/tiers.js';

export default defineConfig({
  test: {
    // Two tiers (test/tiers.ts): `npm test` runs `fast`, `npm run test:faults` the long fault-injection files,
    // `npm run test:all` both. Not in either: the Dockerfile and tarball tests install every dependency from scratch
    // (`npm run test:packaging`); the benchmark smoke test runs minutes of load (`npm run bench:smoke`, in .ci/run).
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/packaging/**', 'test/bench/**', ...faultFiles],
          // One module graph per worker, not per file: each file importing src/ (BullMQ, ioredis, the simulator)
          // anew was a third of the tier's CPU. Test files keep no state between them (each rig its own prefix,
          // registry and clean-up); the faults tier, which kills processes and holds outages, keeps a fresh one.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'faults', include: [...faultFiles] } },
    ],
    // Tests share one real Redis; each uses its own key prefix, but a few spawn
    // worker processes, so keep file-level parallelism modest on 2-core machines.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
