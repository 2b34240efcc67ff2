/**
 * `bulkorder token --check` and `bulkorder login` as a person runs them: the CLI's `main`
 * in-process, an env file, the simulator; we read stdout and the exit code.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, requireApi } from '../../src/config.js';
import { createApiTokenProvider } from '../../src/delivery/apiTokenProvider.js';
import { createCafetariaplanClient } from '../../src/delivery/cafetariaplanClient.js';
import { createHttpTransport } from '../../src/delivery/httpTransport.js';
import { encodeRemoteId } from '../../src/delivery/remoteId.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { closedPort } from './support/rawServers.js';
import { runCli } from '../helpers/runCli.js';
import { TEST_REDIS_URL } from '../helpers/redis.js';

let simulator: Simulator;
let dir: string;
beforeAll(async () => {
  simulator = await startSimulator({ seed: 5 });
  dir = await mkdtemp(join(tmpdir(), 'bulkorder-cli-'));
});
afterAll(async () => {
  await simulator.close();
  await rm(dir, { recursive: true, force: true });
});

async function envFile(name: string, values: Record<string, string>): Promise<string> {
  const path = join(dir, name);
  await writeFile(
    path,
    Object.entries(values)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  );
  return path;
}

/** The CLI in-process; only the env file configures the run (plus REDIS_URL, for the commands that need Redis). */
function bulkorder(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'warn' });
}

function simulatorEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    BULKORDER_BASE_URL: simulator.url,
    BULKORDER_USER_AGENT: 'Acme-AcmeGifts',
    BULKORDER_BUSINESS_CLIENT_ID: 'sim-business',
    BULKORDER_BUSINESS_CLIENT_SECRET: 'sim-business-secret',
    BULKORDER_CAFETARIAPLAN_CLIENT_ID: 'sim-cafetariaplan',
    BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 'sim-cafetariaplan-secret',
    ...overrides,
  };
}

it('token --check: 0 when every API is OK, 2 when credentials are refused, 5 when unreachable; never the token', async () => {
  const [ok, refused, unreachable, unconfigured] = await Promise.all([
    envFile('ok.env', simulatorEnv()).then((f) => bulkorder(['token', '--check', '--env-file', f])),
    envFile('refused.env', simulatorEnv({ BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 'wrong' })).then((f) =>
      bulkorder(['token', '--check', '--env-file', f]),
    ),
    closedPort()
      .then((port) => envFile('down.env', simulatorEnv({ BULKORDER_BASE_URL: `http://127.0.0.1:${port}` })))
      .then((f) => bulkorder(['token', '--check', '--json', '--env-file', f])),
    envFile('none.env', { BULKORDER_BASE_URL: simulator.url }).then((f) =>
      bulkorder(['token', '--check', '--env-file', f]),
    ),
  ]);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toMatch(/^business\s+OK\s/m);
  expect(ok.stdout).toMatch(/^cafetariaplan\s+OK\s/m);
  expect(refused.code).toBe(2);
  expect(refused.stdout).toMatch(/^cafetariaplan\s+FAILED TOKEN_REFUSED/m);
  expect(unreachable.code).toBe(5);
  expect(JSON.parse(unreachable.stdout).checks.map((c: { code: string }) => c.code)).toEqual([
    'TOKEN_ENDPOINT_UNAVAILABLE',
    'TOKEN_ENDPOINT_UNAVAILABLE',
  ]);
  expect(unconfigured.code).toBe(2);
  expect(unconfigured.stderr).toContain('BULKORDER_BUSINESS_CLIENT_ID');
  for (const run of [ok, refused, unreachable])
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/access_token|secret"|Bearer [A-Za-z0-9]/);
}, 30_000);

it('login prints the one-time URL alone on stdout; an unknown customer exits 4', async () => {
  const file = await envFile('login.env', simulatorEnv());
  const customerId = await createAccount(file);
  const [found, unknown] = await Promise.all([
    bulkorder(['login', customerId, '--env-file', file]),
    bulkorder(['login', '9d1f7c1e-0000-4000-8000-000000000000', '--env-file', file]),
  ]);
  expect(found.code).toBe(0);
  expect(found.stdout).toMatch(new RegExp(`^${simulator.url}/sso/\\S+\\n$`));
  expect(unknown.code).toBe(4);
  expect(unknown.stderr).toContain('No account has customerId');
}, 30_000);

/** Creates an employee account at this test's simulator and returns its customerId as the CLI takes it. */
async function createAccount(file: string): Promise<string> {
  const settings = requireApi(loadConfig({ env: {}, envFile: file }), 'cafetariaplan');
  const transport = createHttpTransport({
    connectTimeoutMs: 1000,
    headersTimeoutMs: 1000,
    bodyTimeoutMs: 1000,
    deadlineMs: 2000,
  });
  const logger = silentLogger();
  const client = createCafetariaplanClient(settings, {
    transport,
    logger,
    tokenProvider: createApiTokenProvider(settings, { transport, logger }),
  });
  const outcome = await client.createAccount({
    email: 'kees@example.nl',
    firstName: 'Kees',
    lastName: 'Bakker',
    isoLanguageCode: 'nl',
    companyId: '0b8e6f2e-2a52-4a4c-9a3b-4c6f1d2e3f40',
  });
  await transport.close();
  if (outcome.kind !== 'delivered') throw new Error(`account not created: ${outcome.kind}`);
  return encodeRemoteId(outcome.customerId);
}
