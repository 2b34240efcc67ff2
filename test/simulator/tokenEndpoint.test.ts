import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createAgent, postApi, send, validOrder } from './simulatorHarness.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
let sim: Simulator;
let agent: Agent;

beforeAll(async () => {
  sim = await startSimulator({ tokenLifetimeSeconds: 1234 });
  agent = createAgent();
});
afterAll(async () => {
  await agent.close();
  await sim.close();
});
beforeEach(() => sim.reset());

function tokenRequest(body: string, headers: Record<string, string> = FORM) {
  return send(agent, `${sim.url}/oauth2/token`, { method: 'POST', headers, body });
}
function basic(id: string, secret: string): string {
  return 'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');
}

describe('POST /oauth2/token', () => {
  it('issues a bearer token for form-encoded client credentials, uncacheable', async () => {
    const reply = await tokenRequest(
      'grant_type=client_credentials&client_id=sim-business&client_secret=sim-business-secret',
    );
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 1234 });
    expect(reply.json.access_token.length).toBeGreaterThanOrEqual(32);
    expect(reply.headers['cache-control']).toBe('no-store');
    const counters = sim.counters();
    expect(counters.tokenRequests).toEqual({ business: 1, cafetariaplan: 0, unknown: 0 });
    expect(counters.tokensIssued).toEqual({ business: 1, cafetariaplan: 0 });
  });

  it('accepts HTTP Basic client authentication (RFC 6749 2.3.1), form-decoding the credentials', async () => {
    const custom = await startSimulator({
      credentials: {
        business: { clientId: 'biz id', clientSecret: 'p@ss:w+rd' },
        cafetariaplan: { clientId: 'c', clientSecret: 'd' },
      },
    });
    try {
      const reply = await send(agent, `${custom.url}/oauth2/token`, {
        method: 'POST',
        headers: { ...FORM, authorization: basic('biz id', 'p@ss:w+rd') },
        body: 'grant_type=client_credentials',
      });
      expect(reply.status).toBe(200);
      expect(custom.counters().tokensIssued.business).toBe(1);
    } finally {
      await custom.close();
    }
  });

  it('issues different tokens per request, each bound to its API', async () => {
    const business = await tokenRequest(
      'grant_type=client_credentials&client_id=sim-business&client_secret=sim-business-secret',
    );
    const cafetaria = await tokenRequest(
      'grant_type=client_credentials&client_id=sim-cafetariaplan&client_secret=sim-cafetariaplan-secret',
    );
    expect(business.json.access_token).not.toBe(cafetaria.json.access_token);
    const wrongApi = await postApi(agent, sim, '/business-api/orders', cafetaria.json.access_token, validOrder());
    expect(wrongApi.status).toBe(401);
    expect(wrongApi.json.code).toBe('TOKEN_INVALID');
    const rightApi = await postApi(agent, sim, '/business-api/orders', business.json.access_token, validOrder());
    expect(rightApi.status).toBe(201);
    expect(sim.counters().tokenRequests).toEqual({ business: 1, cafetariaplan: 1, unknown: 0 });
  });

  it.each([
    ['a wrong secret', 'grant_type=client_credentials&client_id=sim-business&client_secret=nope'],
    ['an unknown client', 'grant_type=client_credentials&client_id=someone&client_secret=sim-business-secret'],
    [
      'the other API secret',
      'grant_type=client_credentials&client_id=sim-business&client_secret=sim-cafetariaplan-secret',
    ],
    ['no credentials', 'grant_type=client_credentials'],
    ['no secret', 'grant_type=client_credentials&client_id=sim-business'],
  ])('refuses %s with 401 invalid_client', async (_, body) => {
    const reply = await tokenRequest(body);
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    expect(sim.counters().errors.invalid_client).toBe(1);
    expect(sim.counters().tokensIssued).toEqual({ business: 0, cafetariaplan: 0 });
  });

  it('answers a failed Basic attempt with a Basic challenge', async () => {
    const reply = await tokenRequest('grant_type=client_credentials', {
      ...FORM,
      authorization: basic('sim-business', 'wrong'),
    });
    expect(reply.status).toBe(401);
    expect(reply.headers['www-authenticate']).toMatch(/^Basic /);
    expect(reply.json.error).toBe('invalid_client');
  });

  it('counts token requests of unknown clients apart', async () => {
    await tokenRequest('grant_type=client_credentials&client_id=someone&client_secret=x');
    expect(sim.counters().tokenRequests).toEqual({ business: 0, cafetariaplan: 0, unknown: 1 });
  });

  it.each([
    [
      'another grant type',
      'grant_type=password&client_id=sim-business&client_secret=sim-business-secret',
      'unsupported_grant_type',
    ],
    ['no grant type', 'client_id=sim-business&client_secret=sim-business-secret', 'invalid_request'],
    [
      'a repeated parameter',
      'grant_type=client_credentials&client_id=sim-business&client_id=sim-business&client_secret=sim-business-secret',
      'invalid_request',
    ],
  ])('refuses %s with 400 %s', async (_, body, error) => {
    const reply = await tokenRequest(body);
    expect(reply.status).toBe(400);
    expect(reply.json.error).toBe(error);
    expect(typeof reply.json.error_description).toBe('string');
  });

  it('refuses Basic and a form secret together (one authentication method only)', async () => {
    const reply = await tokenRequest('grant_type=client_credentials&client_secret=sim-business-secret', {
      ...FORM,
      authorization: basic('sim-business', 'sim-business-secret'),
    });
    expect(reply.status).toBe(400);
    expect(reply.json.error).toBe('invalid_request');
  });

  it('refuses a JSON body with 400 invalid_request', async () => {
    const reply = await tokenRequest(
      JSON.stringify({
        grant_type: 'client_credentials',
        client_id: 'sim-business',
        client_secret: 'sim-business-secret',
      }),
      {
        'content-type': 'application/json',
      },
    );
    expect(reply.status).toBe(400);
    expect(reply.json.error).toBe('invalid_request');
  });

  it('refuses GET with 405', async () => {
    const reply = await send(agent, `${sim.url}/oauth2/token`);
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('POST');
  });
});
