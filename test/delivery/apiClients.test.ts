/**
 * The Business and Cafetariaplan clients against the simulator: every request carries the
 * headers the API demands, and every answer is classified as the table says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createBusinessApiClient } from '../../src/delivery/businessApiClient.js';
import { createCafetariaplanClient } from '../../src/delivery/cafetariaplanClient.js';
import { silentLogger } from '../../src/logger.js';
import { apiRig, validOrder, type ApiRig } from './support/apiRig.js';

let rig: ApiRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function business(env: Record<string, string> = {}, options: Parameters<typeof apiRig>[0] = {}) {
  rig = await apiRig(options, env);
  const client = createBusinessApiClient(rig.settings('business'), {
    transport: rig.transport,
    tokenProvider: rig.tokenProvider('business'),
    logger: silentLogger(),
  });
  return { rig, client };
}

describe('Business API client', () => {
  it('delivers an order: 201 with the remote id, one token for many orders', async () => {
    const { rig, client } = await business();
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map(() => client.createOrder(validOrder())));
    for (const outcome of outcomes)
      expect(outcome).toMatchObject({ kind: 'delivered', status: 201, remoteId: expect.stringMatching(/^SIM-\d+$/) });
    expect(rig.simulator.counters().ordersAccepted).toBe(5);
    expect(rig.simulator.counters().tokenRequests.business).toBe(1);
  });

  it('a refused order is permanent, with the API code, message and body', async () => {
    const { client } = await business();
    const outcome = await client.createOrder(validOrder(4242));
    expect(outcome).toMatchObject({ kind: 'permanent', status: 422, code: 'CUSTOMER_UNKNOWN', bodyTruncated: false });
    expect((outcome as { body: { code: string } }).body.code).toBe('CUSTOMER_UNKNOWN');
  });

  it('5xx is retry; 429 is rateLimited with its Retry-After', async () => {
    const { rig, client } = await business();
    rig.simulator.setFaults({
      script: [
        { status: 503, body: '<html>down</html>', headers: { 'retry-after': '4' } },
        { status: 429, body: { code: 'RATE_LIMITED', message: 'slow down' }, headers: { 'retry-after': '2' } },
      ],
    });
    expect(await client.createOrder(validOrder())).toMatchObject({
      kind: 'retry',
      status: 503,
      code: 'HTTP_503',
      retryAfterMs: 4000,
    });
    expect(await client.createOrder(validOrder())).toMatchObject({
      kind: 'rateLimited',
      status: 429,
      code: 'RATE_LIMITED',
      retryAfterMs: 2000,
    });
  });

  it('stored, then 500 (a lost acknowledgement) is retry: the job and its ledger decide', async () => {
    const { rig, client } = await business({}, { faults: { storedThenErrorRate: 1 } });
    expect((await client.createOrder(validOrder())).kind).toBe('retry');
    expect(rig.simulator.counters().ordersAccepted).toBe(1);
  });

  it('never answered is ambiguous, and the order was in fact stored', async () => {
    const { rig, client } = await business(
      { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '300' },
      { faults: { noAnswerRate: 1 } },
    );
    expect(await client.createOrder(validOrder())).toMatchObject({ kind: 'ambiguous', code: 'HEADERS_TIMEOUT' });
    expect(rig.simulator.counters().ordersAccepted).toBe(1);
  });

  it('a revoked token: dropped, refreshed once, the order sent once more and delivered', async () => {
    const { rig, client } = await business();
    expect((await client.createOrder(validOrder())).kind).toBe('delivered');
    rig.simulator.revokeTokens();
    expect((await client.createOrder(validOrder())).kind).toBe('delivered');
    const counters = rig.simulator.counters();
    expect(counters.tokenRequests.business).toBe(2);
    expect(counters.errors.TOKEN_INVALID).toBe(1);
    expect(counters.ordersAccepted).toBe(2);
  });

  it('401 again after one refresh is unauthorized, with no third attempt', async () => {
    const { rig, client } = await business();
    const refused = { status: 401, body: { code: 'TOKEN_INVALID', message: 'no' } };
    rig.simulator.setFaults({ script: [refused, refused, refused] });
    expect(await client.createOrder(validOrder())).toMatchObject({
      kind: 'unauthorized',
      status: 401,
      code: 'TOKEN_INVALID',
    });
    expect(rig.simulator.counters().apiRequests.business).toBe(2);
    expect(rig.simulator.counters().tokenRequests.business).toBe(2);
  });

  it('refused credentials at the token endpoint: unauthorized, the order never sent', async () => {
    const { rig, client } = await business({ BULKORDER_BUSINESS_CLIENT_SECRET: 'wrong-secret' });
    expect(await client.createOrder(validOrder())).toMatchObject({
      kind: 'unauthorized',
      status: 401,
      code: 'TOKEN_REFUSED',
    });
    expect(rig.simulator.counters().apiRequests.business).toBe(0);
    expect(rig.simulator.counters().tokenRequests.business).toBe(1);
  });

  it('a failing token endpoint: bounded retries, then retry (the order never sent)', async () => {
    const { rig, client } = await business({}, { faults: { tokenFailureRate: 1, retryAfterSeconds: 0 } });
    expect(await client.createOrder(validOrder())).toMatchObject({ kind: 'retry', code: 'TOKEN_ENDPOINT_UNAVAILABLE' });
    expect(rig.simulator.counters().tokenRequests.business).toBe(4);
    expect(rig.simulator.counters().apiRequests.business).toBe(0);
  });

  it('HTTP Basic client authentication works as the option', async () => {
    const { rig, client } = await business({ BULKORDER_TOKEN_AUTH: 'basic' });
    expect((await client.createOrder(validOrder())).kind).toBe('delivered');
    expect(rig.simulator.counters().tokensIssued.business).toBe(1);
  });
});

describe('Cafetariaplan client', () => {
  const account = {
    email: 'piet@example.nl',
    firstName: 'Piet',
    lastName: 'Jansen',
    isoLanguageCode: 'nl',
    companyId: '0b8e6f2e-2a52-4a4c-9a3b-4c6f1d2e3f40',
  };

  it('creates an account, refuses a duplicate with 409, and hands out a login URL', async () => {
    rig = await apiRig();
    const client = createCafetariaplanClient(rig.settings('cafetariaplan'), {
      transport: rig.transport,
      tokenProvider: rig.tokenProvider('cafetariaplan'),
      logger: silentLogger(),
    });
    const created = await client.createAccount(account);
    expect(created).toMatchObject({ kind: 'delivered', status: 201, customerId: expect.any(String) });
    expect(await client.createAccount(account)).toMatchObject({
      kind: 'permanent',
      status: 409,
      code: 'ACCOUNT_EXISTS',
    });
    const login = await client.login((created as { customerId: string }).customerId);
    expect(login).toMatchObject({
      kind: 'delivered',
      loginUrl: expect.stringMatching(new RegExp(`^${rig.simulator.url}/sso/`)),
    });
    expect(await client.login('9d1f7c1e-0000-4000-8000-000000000000')).toMatchObject({
      kind: 'permanent',
      status: 404,
      code: 'CUSTOMER_NOT_FOUND',
    });
  });

  it('a 2xx without the expected fields is not taken for success; a login URL under an unknown name is found when it is the only one', async () => {
    rig = await apiRig();
    const client = createCafetariaplanClient(rig.settings('cafetariaplan'), {
      transport: rig.transport,
      tokenProvider: rig.tokenProvider('cafetariaplan'),
      logger: silentLogger(),
    });
    rig.simulator.setFaults({
      script: [
        { status: 201, body: { account: 'made' } },
        { status: 200, body: { link: 'sso/a' } },
        { status: 200, body: { a: 'https://x.test/a', b: 'https://x.test/b' } },
        { status: 200, body: { session: { link: 'https://x.test/a' } } },
      ],
    });
    expect(await client.createAccount(account)).toMatchObject({ kind: 'ambiguous', code: 'CUSTOMER_ID_MISSING' });
    expect(await client.login('9d1f7c1e-0000-4000-8000-000000000000')).toMatchObject({
      kind: 'permanent',
      code: 'LOGIN_URL_MISSING',
    });
    expect(await client.login('9d1f7c1e-0000-4000-8000-000000000000')).toMatchObject({
      kind: 'permanent',
      code: 'LOGIN_URL_AMBIGUOUS',
    });
    // Read by its shape: the one absolute URL in the answer, under whatever name.
    expect(await client.login('9d1f7c1e-0000-4000-8000-000000000000')).toMatchObject({
      kind: 'delivered',
      loginUrl: 'https://x.test/a',
    });
  });
});
