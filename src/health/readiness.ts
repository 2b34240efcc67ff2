import type { SecretUrl } from '../config.js';
import type { RedisClient } from '../redis.js';
import { isBulkorderError } from '../errors.js';
import type { BulkorderMetrics } from '../metrics/bulkorderMetrics.js';
import { assertRedisReady } from '../redis.js';
import type { RedisSafety } from '../worker/redisGuard.js';

/** One check of `/readyz`. */
export interface ReadyCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

export interface ReadinessDeps {
  redis: RedisClient;
  redisUrl: SecretUrl | string;
  /** Token failures seen by this process (the worker); absent where no token is fetched (the dashboard). */
  metrics?: Pick<BulkorderMetrics, 'lastTokenFailure'>;
  /** True once SIGTERM/SIGINT arrived: a load balancer should stop sending work. */
  shuttingDown(): boolean;
  /** The worker's Redis guard (src/worker/redisGuard.ts): unsafe while it takes no jobs. Absent outside a worker. */
  redisSafety?(): RedisSafety;
}

/** Past this a check counts as failed: a readiness probe must answer promptly. */
const CHECK_TIMEOUT_MS = 2_000;

/**
 * `/readyz`: Redis answers and is fit (noeviction), the worker's Redis guard takes jobs, the last
 * token request did not fail, and the process is not shutting down. `/healthz` deliberately checks none of this.
 */
export async function checkReadiness(deps: ReadinessDeps): Promise<{ ready: boolean; checks: ReadyCheck[] }> {
  const checks: ReadyCheck[] = [];
  checks.push({
    name: 'shutdown',
    ok: !deps.shuttingDown(),
    ...(deps.shuttingDown() ? { detail: 'shutting down' } : {}),
  });
  checks.push(await redisCheck(deps));
  const safety = deps.redisSafety?.();
  if (safety !== undefined)
    checks.push(
      safety.unsafe
        ? { name: 'redis-guard', ok: false, detail: `${safety.code ?? ''}: ${safety.reason ?? ''}; taking no jobs` }
        : { name: 'redis-guard', ok: true },
    );
  const failure = deps.metrics?.lastTokenFailure();
  checks.push(
    failure === undefined
      ? { name: 'token', ok: true }
      : {
          name: 'token',
          ok: false,
          detail: `the last ${failure.api} token request failed at ${new Date(failure.at).toISOString()} (${failure.message})`,
        },
  );
  return { ready: checks.every((c) => c.ok), checks };
}

async function redisCheck(deps: ReadinessDeps): Promise<ReadyCheck> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      assertRedisReady(deps.redis, deps.redisUrl),
      new Promise(
        (_, reject) => (timer = setTimeout(() => reject(new Error('no answer within 2 s')), CHECK_TIMEOUT_MS).unref()),
      ),
    ]);
    return { name: 'redis', ok: true };
  } catch (error) {
    return { name: 'redis', ok: false, detail: isBulkorderError(error) ? error.code : (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
