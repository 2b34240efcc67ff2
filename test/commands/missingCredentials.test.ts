import { afterEach, describe, expect, it } from 'vitest';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
import { TEST_REDIS_URL } from '../helpers/redis.js';

afterEach(killAllCli);

/** Only Cafetariaplan credentials: everything that works on orders must refuse, and end. */
const accountsOnly = {
  REDIS_URL: TEST_REDIS_URL,
  BULKORDER_ENV: 'acceptance',
  BULKORDER_BASE_URL: 'http://127.0.0.1:9',
  BULKORDER_BUSINESS_CLIENT_ID: '',
  BULKORDER_BUSINESS_CLIENT_SECRET: '',
  BULKORDER_CAFETARIAPLAN_CLIENT_ID: 'cafetaria-client',
  BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 'cafetaria-secret',
};

describe('a command that needs the Business API credentials, started without them', () => {
  // The dashboard used to print the refusal and then keep running: the Redis connection it had opened first
  // was never closed. Now the credentials are checked before any connection exists.
  for (const args of [['dashboard', '--port', '0'], ['status']]) {
    it(`bulkorder ${args[0]} exits 2 naming the missing variable, and does not stay running`, async () => {
      const cli = startCli(args, accountsOnly);
      const code = await Promise.race([
        cli.exited,
        new Promise<string>((resolve) => setTimeout(() => resolve('still running after 45 s'), 45_000).unref()),
      ]);
      expect(code).toBe(2);
      expect(cli.output()).toMatch(/BULKORDER_BUSINESS_CLIENT_ID: is required for the business API/);
    }, 60_000);
  }
});
