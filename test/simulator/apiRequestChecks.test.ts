import { Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request, type Agent } from 'undici';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createAgent, fetchToken, manualClock, postApi, send, validOrder } from './simulatorHarness.js';

const clock = manualClock();
let sim: Simulator;
let agent: Agent;
let token: string;

beforeAll(async () => {
  sim = await startSimulator({ tokenLifetimeSeconds: 60, clock: clock.now });
  agent = createAgent();
});
afterAll(async () => {
  await agent.close();
  await sim.close();
});
beforeEach(async () => {
  sim.reset();
  token = await fetchToken(agent, sim);
});

const ORDERS = '/business-api/orders';

describe('Bearer token', () => {
  it('is required: TOKEN_MISSING with a Bearer challenge', async () => {
    const reply = await postApi(agent, sim, ORDERS, token, validOrder(), { authorization: undefined });
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ code: 'TOKEN_MISSING', message: expect.any(String) });
    expect(reply.headers['www-authenticate']).toMatch(/^Bearer /);
  });

  it('must use the Bearer scheme', async () => {
    const reply = await postApi(agent, sim, ORDERS, token, validOrder(), { authorization: `Token ${token}` });
    expect(reply.json.code).toBe('TOKEN_MISSING');
  });

  it('accepts the scheme in any case', async () => {
    const reply = await postApi(agent, sim, ORDERS, token, validOrder(), { authorization: `bearer ${token}` });
    expect(reply.status).toBe(201);
  });

  it('refuses an unknown token with TOKEN_INVALID', async () => {
    const reply = await postApi(agent, sim, ORDERS, 'not-a-token', validOrder());
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe('TOKEN_INVALID');
    expect(reply.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('expires after expires_in seconds: TOKEN_EXPIRED', async () => {
    clock.advance(59_999);
    expect((await postApi(agent, sim, ORDERS, token, validOrder())).status).toBe(201);
    clock.advance(1);
    const reply = await postApi(agent, sim, ORDERS, token, validOrder());
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe('TOKEN_EXPIRED');
    const fresh = await fetchToken(agent, sim);
    expect((await postApi(agent, sim, ORDERS, fresh, validOrder())).status).toBe(201);
  });

  it('answers 401 TOKEN_INVALID for every token issued before revokeTokens(), not after', async () => {
    const other = await fetchToken(agent, sim);
    sim.revokeTokens();
    expect((await postApi(agent, sim, ORDERS, token, validOrder())).json.code).toBe('TOKEN_INVALID');
    expect((await postApi(agent, sim, ORDERS, other, validOrder())).json.code).toBe('TOKEN_INVALID');
    const fresh = await fetchToken(agent, sim);
    expect((await postApi(agent, sim, ORDERS, fresh, validOrder())).status).toBe(201);
    expect(sim.counters().errors.TOKEN_INVALID).toBe(2);
  });
});

describe('User-Agent', () => {
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['without a company', 'Acme'],
    ['with a slash', 'Acme/1.0'],
    ['with spaces', 'Acme - Gifts'],
    ["undici's default", 'undici'],
    ['node-fetch', 'node-fetch'],
    ['curl', 'curl/8.5.0'],
    ['axios', 'axios/1.7.2'],
    ['python-requests', 'python-requests'],
  ])('refuses %s with 400 USER_AGENT_INVALID', async (_, userAgent) => {
    const headers = userAgent === undefined ? { 'user-agent': undefined } : { 'user-agent': userAgent };
    const reply = await postApi(agent, sim, ORDERS, token, validOrder(), headers);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('USER_AGENT_INVALID');
    expect(sim.counters().ordersAccepted).toBe(0);
  });

  it.each(['Acme-AcmeGifts', 'bulkorder-Example.BV', 'X1-a_b-c'])('accepts %s', async (userAgent) => {
    const reply = await postApi(agent, sim, ORDERS, token, validOrder(), { 'user-agent': userAgent });
    expect(reply.status).toBe(201);
  });
});

describe('Content-Type and body', () => {
  it.each([
    ['missing', undefined],
    ['text/plain', 'text/plain'],
    ['form-encoded', 'application/x-www-form-urlencoded'],
    ['JSON in another charset', 'application/json; charset=iso-8859-1'],
  ])('refuses %s with 415 UNSUPPORTED_MEDIA_TYPE', async (_, type) => {
    const reply = await postApi(agent, sim, ORDERS, token, validOrder(), { 'content-type': type });
    expect(reply.status).toBe(415);
    expect(reply.json.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts application/json; charset=utf-8', async () => {
    const reply = await postApi(agent, sim, ORDERS, token, validOrder(), {
      'content-type': 'application/json; charset=UTF-8',
    });
    expect(reply.status).toBe(201);
  });

  it('refuses a body over 1 MiB with 413 and closes the connection', async () => {
    const huge = JSON.stringify({ ...validOrder(), padding: 'x'.repeat(1024 * 1024) });
    const reply = await postApi(agent, sim, ORDERS, token, huge);
    expect(reply.status).toBe(413);
    expect(reply.json.code).toBe('PAYLOAD_TOO_LARGE');
    expect(reply.headers.connection).toBe('close');
    // The simulator keeps answering on fresh connections.
    expect((await postApi(agent, sim, ORDERS, token, validOrder())).status).toBe(201);
  });

  it('refuses a streamed (chunked) body over 1 MiB with 413', async () => {
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 20; i++) yield Buffer.alloc(64 * 1024, 0x20);
    }
    const response = await request(`${sim.url}${ORDERS}`, {
      dispatcher: agent,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'user-agent': 'Acme-AcmeGifts', 'content-type': 'application/json' },
      body: Readable.from(chunks()),
    });
    expect(response.statusCode).toBe(413);
    expect(((await response.body.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it.each([
    ['truncated JSON', '{"businessCustomerId": 1001,'],
    ['an empty body', ''],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
  ])('refuses %s with 400 MALFORMED_JSON', async (_, body) => {
    const reply = await postApi(agent, sim, ORDERS, token, body);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('MALFORMED_JSON');
  });
});

describe('routing', () => {
  it.each(['/business-api/order', '/business-api/orders/', '/business-api', '/', '/cafetariaplan-api/orders'])(
    'answers 404 NOT_FOUND for %s',
    async (path) => {
      const reply = await postApi(agent, sim, path, token, validOrder());
      expect(reply.status).toBe(404);
      expect(reply.json.code).toBe('NOT_FOUND');
    },
  );

  it.each([
    ['GET', '/business-api/orders'],
    ['PUT', '/cafetariaplan-api/accounts'],
    ['DELETE', '/cafetariaplan-api/login'],
  ] as const)('answers %s %s with 405 and Allow: POST', async (method, path) => {
    const reply = await send(agent, `${sim.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('POST');
    expect(reply.json.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('ignores a query string', async () => {
    expect((await postApi(agent, sim, `${ORDERS}?x=1`, token, validOrder())).status).toBe(201);
  });

  it('counts requests, API requests and answers by status and code', async () => {
    sim.reset(); // forget the token request of beforeEach
    await postApi(agent, sim, ORDERS, token, validOrder());
    await postApi(agent, sim, ORDERS, 'bad', validOrder());
    await postApi(agent, sim, '/nowhere', token, {});
    const counters = sim.counters();
    expect(counters.requests).toBe(3);
    expect(counters.apiRequests).toEqual({ business: 2, cafetariaplan: 0 });
    expect(counters.statuses).toEqual({ '201': 1, '401': 1, '404': 1 });
    expect(counters.errors).toEqual({ TOKEN_INVALID: 1, NOT_FOUND: 1 });
  });
});
