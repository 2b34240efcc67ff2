/**
 * The suite's two tiers (vitest.config.ts makes each a vitest project):
 * - `fast`: every test file not listed below; `npm test` runs it (typecheck and cycles first).
 * - `faults`: the long fault-injection files, which kill processes or hold an outage for many seconds;
 *   `npm run test:faults` runs them, `npm run test:all` (what `.ci/run` runs) runs both tiers.
 * A new test file is `fast` unless it is added here. test/tiers.test.ts checks that vitest puts every
 * test file in exactly one tier and that every file named here exists.
 */
export const faultFiles: readonly string[] = [
  'test/reliability/breaker.test.ts',
  'test/reliability/clockSkew.test.ts',
  'test/reliability/watchClock.test.ts',
  'test/reliability/clockSkewRecovery.test.ts',
  'test/reliability/batchCanary.test.ts',
  'test/reliability/sharedApi.test.ts',
  'test/reliability/importCrash.test.ts',
  'test/reliability/importKill.test.ts',
  'test/reliability/redisFaults.test.ts',
  'test/reliability/fileFaults.test.ts',
  'test/reliability/fileGrowth.test.ts',
  'test/reliability/outputDisk.test.ts',
  'test/reliability/redisPersistence.test.ts',
  'test/reliability/ledgerLoss.test.ts',
  'test/reliability/redisUnsafe.test.ts',
  'test/reliability/chaos.test.ts',
  'test/reliability/rateChange.test.ts',
  'test/reliability/clusterFailover.test.ts',
  'test/reliability/clusterFailoverServices.test.ts',
  'test/worker/processes.test.ts',
  'test/worker/startupFailure.test.ts',
  'test/worker/wedgeGuardOff.test.ts',
  'test/operations/stopOnSignalRedisGone.test.ts',
];

/**
 * What `npm run reliability` runs to write RELIABILITY.md (test/reliability/renderReliability.ts):
 * folders or files; every test that records a row (test/helpers/reliabilityLog.ts) is among them.
 */
export const reliabilityFiles: readonly string[] = [
  'test/reliability',
  'test/worker',
  'test/operations/watch.test.ts',
  'test/operations/watchTargets.test.ts',
  'test/operations/closeTheLoop.test.ts',
  'test/operations/stopOnSignal.test.ts',
  'test/operations/stopOnSignalRedisGone.test.ts',
  'test/delivery/transportOutcomes.test.ts',
  'test/delivery/errorBody2xx.test.ts',
  'test/config/redisUrlSecret.test.ts',
  'test/config/redisTls.test.ts',
  'test/observability/webhookAddress.test.ts',
  'test/observability/uploadNames.test.ts',
  'test/observability/dashboardHost.test.ts',
  'test/ingest/nulByte.test.ts',
];
