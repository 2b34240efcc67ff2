/**
 * Secrets and tokens never reach a log line, an error or an outcome: a full run with a canary
 * client secret (deliveries, refusals, 5xx, 401 refresh, token failures, servers that echo
 * what they were sent), with pino at trace level writing to a stream we read.
 */
import { inspect } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { loadConfig, requireApi } from '../../src/config.js';
import { createBusinessApiClient } from '../../src/delivery/businessApiClient.js';
import { checkCredentials } from '../../src/delivery/checkCredentials.js';
import { fetchAccessToken } from '../../src/delivery/tokenEndpoint.js';
import type { AccessToken } from '../../src/delivery/tokenEndpoint.js';
import { deletePrefix, testPrefix, testRedis } from '../helpers/redis.js';
import { apiRig, capturedLogger, USER_AGENT, validOrder, type ApiRig } from './support/apiRig.js';
import { httpServer, type RawServer } from './support/rawServers.js';

const CANARY = 'canary-7f3a9c-SECRET-do-not-log';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Everything a person could ever see of an error. */
function exposed(error: unknown): string {
  const e = error as Error & { details?: unknown };
  return [e.message, e.stack, inspect(e, { depth: 10 }), JSON.stringify(e.details ?? null), JSON.stringify(e)].join(
    '\n',
  );
}

/** A server that echoes everything it was sent (headers and body) in a 400 JSON error. */
async function echoServer(status = 400): Promise<RawServer> {
  const server = await httpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const echo = `headers=${JSON.stringify(req.headers)} body=${body}`;
      res.writeHead(status, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          code: 'ECHO',
          message: echo,
          error: 'invalid_client',
          error_description: echo,
          details: { headers: req.headers, body },
        }),
      );
    });
  });
  cleanups.push(() => server.close());
  return server;
}

it('a canary secret and every token stay out of logs, errors and outcomes', async () => {
  const { logger, lines } = capturedLogger('trace');
  const credentials = {
    business: { clientId: 'canary-client', clientSecret: CANARY },
    cafetariaplan: { clientId: 'cp', clientSecret: 'cp-secret-value' },
  };
  const rig: ApiRig = await apiRig({ credentials, tokenLifetimeSeconds: 60 }, {}, logger);
  cleanups.push(() => rig.close());
  const redis = testRedis();
  const prefix = testPrefix('canary');
  cleanups.push(async () => {
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });
  const tokenProvider = rig.tokenProvider('business', { redis, keyPrefix: prefix });
  const client = createBusinessApiClient(rig.settings('business'), { transport: rig.transport, tokenProvider, logger });
  const tokens: AccessToken[] = [];
  const seen: unknown[] = [];

  seen.push(await client.createOrder(validOrder()));
  tokens.push(await tokenProvider.getToken());
  seen.push(await client.createOrder(validOrder(4242)));
  rig.simulator.setFaults({
    script: [
      { status: 503, body: '<html>busy</html>' },
      { status: 500, body: { code: 'BOOM', message: 'boom' } },
    ],
  });
  seen.push(await client.createOrder(validOrder()), await client.createOrder(validOrder()));
  rig.simulator.revokeTokens();
  seen.push(await client.createOrder(validOrder()));
  tokens.push(await tokenProvider.getToken());
  rig.simulator.setFaults({
    script: [
      { status: 401, body: { code: 'TOKEN_INVALID', message: 'no' } },
      { status: 401, body: { code: 'TOKEN_INVALID', message: 'no' } },
    ],
  });
  seen.push(await client.createOrder(validOrder()));
  tokens.push(await tokenProvider.getToken());
  rig.simulator.revokeTokens();
  rig.simulator.setFaults({ tokenFailureRate: 1, retryAfterSeconds: 0 });
  seen.push(await client.createOrder(validOrder()));
  rig.simulator.setFaults({ tokenFailureRate: 0 });
  expect(seen.map((o) => (o as { kind: string }).kind)).toEqual([
    'delivered',
    'permanent',
    'retry',
    'retry',
    'delivered',
    'unauthorized',
    'retry',
  ]);

  // An API that echoes the request (Authorization included) back in its error body.
  const echoApi = await echoServer(422);
  const echoSettings = { ...rig.settings('business'), apiBaseUrl: echoApi.url };
  const echoClient = createBusinessApiClient(echoSettings, {
    transport: rig.transport,
    tokenProvider: rig.tokenProvider('business'),
    logger,
  });
  const echoed = await echoClient.createOrder(validOrder());
  expect(echoed.kind).toBe('permanent');
  expect(JSON.stringify(echoed)).toContain('[redacted]');
  seen.push(echoed);

  // Token endpoints that echo the form (client_secret) or the Basic header back, refusing or failing.
  const errors: unknown[] = [];
  for (const [status, tokenAuth] of [
    [400, 'body'],
    [401, 'basic'],
    [500, 'body'],
  ] as const) {
    const echoToken = await echoServer(status);
    const settings = { ...rig.settings('business'), tokenUrl: `${echoToken.url}/oauth2/token`, tokenAuth };
    await fetchAccessToken({ ...settings, transport: rig.transport, logger, attempts: 2, baseDelayMs: 1 }).then(
      () => expect.fail('the echo server never grants a token'),
      (error: unknown) => errors.push(error),
    );
  }
  expect(errors.map((e) => (e as { code: string }).code)).toEqual([
    'TOKEN_REFUSED',
    'TOKEN_REFUSED',
    'TOKEN_ENDPOINT_UNAVAILABLE',
  ]);

  // The `token --check` path, with a wrong secret and the right one.
  const echoConfig = loadConfig({
    env: {
      BULKORDER_BASE_URL: (await echoServer(401)).url,
      BULKORDER_USER_AGENT: USER_AGENT,
      BULKORDER_BUSINESS_CLIENT_ID: 'canary-client',
      BULKORDER_BUSINESS_CLIENT_SECRET: CANARY,
    },
  });
  const checks = await checkCredentials(echoConfig, logger);
  expect(checks[0]).toMatchObject({ ok: false, code: 'TOKEN_REFUSED' });
  seen.push(checks, inspect(requireApi(echoConfig, 'business'), { depth: 10 }), JSON.stringify(echoConfig));

  const needles = [
    CANARY,
    encodeURIComponent(CANARY),
    Buffer.from(`canary-client:${CANARY}`).toString('base64'),
    ...tokens.map((t) => t.value),
  ];
  expect(new Set(tokens.map((t) => t.id)).size).toBe(3);
  const log = lines();
  expect(log).toContain('API refused the request');
  expect(log).toContain('token request failed');
  const haystacks = { log, outcomes: inspect(seen, { depth: 20 }), errors: errors.map(exposed).join('\n') };
  for (const [where, text] of Object.entries(haystacks)) {
    for (const needle of needles) expect(text.includes(needle), `${where} contains a secret`).toBe(false);
  }
});
