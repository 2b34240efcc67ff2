import { afterEach, describe, expect, it } from 'vitest';
import { assertRedisReady, createRedis } from '../../src/redis.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';

let server: PrivateRedis | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('a wrong Redis password', () => {
  it('is reported as a configuration error naming REDIS_URL, not as "Redis does not answer"', async () => {
    server = await startPrivateRedis(['--requirepass', 'right-secret', '--maxmemory-policy', 'noeviction']);
    const port = new URL(server.url).port;
    for (const [url, word] of [
      [`redis://:wrong-secret@127.0.0.1:${port}`, 'WRONGPASS'],
      [`redis://127.0.0.1:${port}`, 'NOAUTH'],
    ] as const) {
      const redis = createRedis(url, 'producer');
      try {
        const error = await assertRedisReady(redis, url).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, word).toMatchObject({ exitCode: 2, variable: 'REDIS_URL' });
        expect(String((error as Error).message)).toContain(word);
        expect(String((error as Error).message)).not.toContain('wrong-secret');
        expect(String((error as Error).message)).not.toContain('does not answer');
      } finally {
        redis.disconnect();
      }
    }
    const ok = createRedis(`redis://:right-secret@127.0.0.1:${port}`, 'producer');
    await expect(assertRedisReady(ok, 'x')).resolves.toBeUndefined();
    ok.disconnect();
  });
});
