/** The simulator's answer profiles, request by request (the end-to-end runs are in test/reliability/answerProfiles.test.ts). */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loginUrlIn } from '../../src/delivery/cafetariaplanClient.js';
import { ANSWER_PROFILES, startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createAgent, fetchToken, postApi, validOrder } from './simulatorHarness.js';

const agent = createAgent();
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});
afterAll(() => agent.close());

describe('simulator answer profiles', () => {
  it('an unknown profile name is refused with the list of names', async () => {
    await expect(startSimulator({ profile: 'nope' })).rejects.toMatchObject({
      code: 'SIMULATOR_PROFILE_UNKNOWN',
      message: expect.stringContaining('integer-ids'),
    });
  });

  it.each([
    ['code-message', (b: any) => expect(b).toMatchObject({ code: 'PRODUCT_UNKNOWN', message: expect.any(String) })],
    ['oauth', (b: any) => expect(b).toMatchObject({ error: 'product_unknown', error_description: expect.any(String) })],
    [
      'problem',
      (b: any) =>
        expect(b).toMatchObject({
          type: expect.stringMatching(/^https:/),
          title: 'Product unknown',
          status: 422,
          detail: expect.any(String),
        }),
    ],
    ['errors-array', (b: any) => expect(b.errors[0]).toMatchObject({ code: 'PRODUCT_UNKNOWN' })],
  ] as const)('error bodies shaped %s', async (errors, check) => {
    sim = await startSimulator({ profile: { errors } });
    const token = await fetchToken(agent, sim);
    const reply = await postApi(agent, sim, '/business-api/orders', token, {
      ...validOrder(),
      products: [{ productId: 5999, quantity: 1 }],
    });
    expect(reply.status).toBe(422);
    check(reply.json);
    if (errors === 'problem') expect(reply.headers['content-type']).toBe('application/problem+json');
  });

  it('HTML and empty error bodies; unknown customer under 403; the User-Agent refused under a code the client never listed', async () => {
    sim = await startSimulator({
      profile: {
        errors: 'html',
        unknownCustomerStatus: 403,
        userAgentRefusal: { status: 400, code: 'USER_AGENT_REQUIRED' },
      },
    });
    const token = await fetchToken(agent, sim);
    const html = await postApi(agent, sim, '/business-api/orders', token, {
      ...validOrder(),
      businessCustomerId: 1999,
    });
    expect(html.status).toBe(403);
    expect(html.text).toMatch(/^<html>/);
    const noAgent = await postApi(agent, sim, '/business-api/orders', token, validOrder(), { 'user-agent': undefined });
    expect(noAgent.status).toBe(400);
    expect(sim.counters().errors.USER_AGENT_REQUIRED).toBe(1);
    await sim.close();
    sim = await startSimulator({ profile: 'bare' });
    const bare = await postApi(agent, sim, '/business-api/orders', await fetchToken(agent, sim), {
      ...validOrder(),
      products: [{ productId: 5999, quantity: 1 }],
    });
    expect([bare.status, bare.text]).toEqual([422, '']);
  });

  it('success 200 without a body gives the id in Location; integer ids; Idempotency-Key honoured: the same key answers the first create again and stores nothing', async () => {
    sim = await startSimulator({
      profile: { ...ANSWER_PROFILES['integer-ids'], success: { status: 200, body: false }, idempotency: 'honour' },
    });
    const token = await fetchToken(agent, sim);
    const first = await postApi(agent, sim, '/business-api/orders', token, validOrder(), {
      'idempotency-key': 'ref.1001.A',
    });
    expect([first.status, first.text, first.headers.location]).toEqual([200, '', '/business-api/orders/1']);
    const again = await postApi(agent, sim, '/business-api/orders', token, validOrder(), {
      'idempotency-key': 'ref.1001.A',
    });
    expect(again.headers.location).toBe('/business-api/orders/1');
    expect(sim.counters()).toMatchObject({ ordersAccepted: 1, idempotencyKeys: 2, idempotentReplays: 1 });
    expect(sim.orders()[0]?.idempotencyKey).toBe('ref.1001.A');
  });

  it('the login URL is found in the configured fields, else as the one absolute URL anywhere in the body', () => {
    const fields = ['loginUrl', 'url'];
    expect(loginUrlIn({ url: 'https://sso.example/a' }, fields)).toEqual({ url: 'https://sso.example/a' });
    expect(loginUrlIn({ session: { links: { sso: 'https://sso.example/b' }, note: 'x' } }, fields)).toEqual({
      url: 'https://sso.example/b',
    });
    expect(loginUrlIn({ data: [{ href: 'http://127.0.0.1:1/sso/c' }] }, fields)).toEqual({
      url: 'http://127.0.0.1:1/sso/c',
    });
    expect(loginUrlIn({ a: 'https://x.example/1', b: 'https://x.example/2' }, fields)).toMatchObject({
      problem: 'LOGIN_URL_AMBIGUOUS',
    });
    expect(loginUrlIn({ loginUrl: 'https://x.example/1', b: 'https://x.example/2' }, fields)).toEqual({
      url: 'https://x.example/1',
    });
    expect(loginUrlIn({ loginUrl: '/relative' }, fields)).toMatchObject({ problem: 'LOGIN_URL_INVALID' });
    expect(loginUrlIn({ ok: true }, fields)).toMatchObject({ problem: 'LOGIN_URL_MISSING' });
  });
});
