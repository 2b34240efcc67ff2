import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createAgent, fetchToken, manualClock, postApi, send, validAccount } from './simulatorHarness.js';

const clock = manualClock();
let sim: Simulator;
let agent: Agent;
let token: string;

beforeAll(async () => {
  sim = await startSimulator({ clock: clock.now, loginCodeLifetimeSeconds: 60 });
  agent = createAgent();
  token = await fetchToken(agent, sim, 'cafetariaplan');
});
afterAll(async () => {
  await agent.close();
  await sim.close();
});
beforeEach(() => sim.reset());

const createAccount = (body: unknown) => postApi(agent, sim, '/cafetariaplan-api/accounts', token, body);
const login = (body: unknown) => postApi(agent, sim, '/cafetariaplan-api/login', token, body);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('POST /cafetariaplan-api/accounts', () => {
  it('creates an account: 201 {customerId: <uuid>}', async () => {
    const reply = await createAccount(validAccount());
    expect(reply.status).toBe(201);
    expect(reply.json).toEqual({ customerId: expect.stringMatching(UUID) });
    expect(sim.counters().accountsCreated).toBe(1);
    expect(sim.counters().apiRequests.cafetariaplan).toBe(1);
  });

  it('refuses the same (companyId, email) again with 409 ACCOUNT_EXISTS, ignoring case', async () => {
    await createAccount(validAccount());
    const again = await createAccount({
      ...validAccount(),
      email: 'JAN@example.com',
      companyId: validAccount().companyId.toUpperCase(),
    });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('ACCOUNT_EXISTS');
    const otherCompany = await createAccount({ ...validAccount(), companyId: '9d7c1a52-1111-4222-8333-444455556666' });
    expect(otherCompany.status).toBe(201);
    expect(sim.counters().accountsCreated).toBe(2);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown field', { phone: '+31612345678' }, 'phone'],
    ['a bad email', { email: 'jan@' }, 'email'],
    ['a blank firstName', { firstName: '' }, 'firstName'],
    ['a missing lastName', { lastName: undefined }, 'lastName'],
    ['an uppercase isoLanguageCode', { isoLanguageCode: 'NL' }, 'isoLanguageCode'],
    ['a companyId that is not a UUID', { companyId: 'acme' }, 'companyId'],
    ['a companyId as a number', { companyId: 42 }, 'companyId'],
  ])('refuses %s with 400 VALIDATION_FAILED', async (_, change, path) => {
    const reply = await createAccount({ ...validAccount(), ...change });
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('VALIDATION_FAILED');
    expect(reply.json.details).toContainEqual({ path, problem: expect.any(String) });
  });

  it('refuses a Business API token', async () => {
    const businessToken = await fetchToken(agent, sim, 'business');
    const reply = await postApi(agent, sim, '/cafetariaplan-api/accounts', businessToken, validAccount());
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe('TOKEN_INVALID');
  });
});

describe('POST /cafetariaplan-api/login and GET /sso/<code>', () => {
  it('hands out a one-time login URL that works once, then answers 410', async () => {
    const { customerId } = (await createAccount(validAccount())).json;
    const reply = await login({ customerId });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ loginUrl: expect.stringMatching(new RegExp(`^${sim.url}/sso/[A-Za-z0-9_-]{20,}$`)) });

    const first = await send(agent, reply.json.loginUrl);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toMatch(/text\/html/);
    const second = await send(agent, reply.json.loginUrl);
    expect(second.status).toBe(410);
    expect(second.json.code).toBe('LOGIN_URL_USED');
    expect(sim.counters().logins).toBe(1);
    expect(sim.counters().ssoRedeemed).toBe(1);
  });

  it('gives a new URL on every login', async () => {
    const { customerId } = (await createAccount(validAccount())).json;
    const a = (await login({ customerId })).json.loginUrl;
    const b = (await login({ customerId })).json.loginUrl;
    expect(a).not.toBe(b);
    expect(sim.counters().logins).toBe(2);
  });

  it('expires an unused login URL after its lifetime (410 LOGIN_URL_EXPIRED)', async () => {
    const { customerId } = (await createAccount(validAccount())).json;
    const { loginUrl } = (await login({ customerId })).json;
    clock.advance(60_000);
    const reply = await send(agent, loginUrl);
    expect(reply.status).toBe(410);
    expect(reply.json.code).toBe('LOGIN_URL_EXPIRED');
  });

  it('answers an unknown customerId with 404 CUSTOMER_NOT_FOUND', async () => {
    const reply = await login({ customerId: '0b9c6a1e-2f3d-4c5b-8a79-6e5f4d3c2b1a' });
    expect(reply.status).toBe(404);
    expect(reply.json.code).toBe('CUSTOMER_NOT_FOUND');
  });

  it.each([
    ['no customerId', {}],
    ['a numeric customerId', { customerId: 12 }],
    ['an extra field', { customerId: '0b9c6a1e-2f3d-4c5b-8a79-6e5f4d3c2b1a', redirect: 'x' }],
  ])('refuses %s with 400 VALIDATION_FAILED', async (_, body) => {
    const reply = await login(body);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('VALIDATION_FAILED');
  });

  it('answers an unknown login code with 404 and POST with 405', async () => {
    expect((await send(agent, `${sim.url}/sso/nope`)).status).toBe(404);
    expect((await send(agent, `${sim.url}/sso/nope`, { method: 'POST' })).status).toBe(405);
  });
});
