import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createAgent, fetchToken, postApi, send, validOrder } from './simulatorHarness.js';

let sim: Simulator;
let agent: Agent;

beforeAll(async () => {
  sim = await startSimulator();
  agent = createAgent();
});
afterAll(async () => {
  await agent.close();
  await sim.close();
});
beforeEach(() => {
  sim.setFaults({ serverErrorRate: 0, script: [] });
  sim.reset();
});

const admin = (path: string, method: 'GET' | 'POST' = 'GET', body?: unknown) =>
  send(agent, `${sim.url}/__admin/${path}`, {
    method,
    ...(body === undefined
      ? {}
      : {
          body: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { 'content-type': 'application/json' },
        }),
  });

describe('/__admin', () => {
  it('GET counters equals counters(), and admin requests are not counted', async () => {
    const token = await fetchToken(agent, sim);
    await postApi(agent, sim, '/business-api/orders', token, validOrder());
    const reply = await admin('counters');
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual(sim.counters());
    expect(reply.json.requests).toBe(2);
    expect(reply.json.ordersAccepted).toBe(1);
  });

  it('GET orders lists the stored orders', async () => {
    const token = await fetchToken(agent, sim);
    await postApi(agent, sim, '/business-api/orders', token, validOrder());
    const reply = await admin('orders');
    expect(reply.json).toEqual([{ orderId: 'SIM-1', payload: validOrder(), receivedAt: expect.any(String) }]);
  });

  it('POST faults merges JSON faults and answers the faults in force; GET faults reads them', async () => {
    const reply = await admin('faults', 'POST', { serverErrorRate: 1, script: [{ status: 418 }] });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ serverErrorRate: 1, script: [{ status: 418 }] });
    expect((await admin('faults')).json).toEqual(reply.json);
    const token = await fetchToken(agent, sim);
    expect((await postApi(agent, sim, '/business-api/orders', token, validOrder())).status).toBe(418);
    expect((await postApi(agent, sim, '/business-api/orders', token, validOrder())).status).toBeGreaterThanOrEqual(500);
  });

  it('POST faults refuses invalid values and malformed JSON with 400', async () => {
    const invalid = await admin('faults', 'POST', { noAnswerRate: 2 });
    expect(invalid.status).toBe(400);
    expect(invalid.json.code).toBe('SIMULATOR_FAULTS_INVALID');
    expect(invalid.json.message).toContain('noAnswerRate');
    const malformed = await admin('faults', 'POST', '{');
    expect(malformed.status).toBe(400);
    expect(malformed.json.code).toBe('MALFORMED_JSON');
    expect(sim.faults().noAnswerRate).toBe(0);
  });

  it('POST revoke-tokens makes every issued token answer 401', async () => {
    const token = await fetchToken(agent, sim);
    expect((await admin('revoke-tokens', 'POST')).status).toBe(200);
    const reply = await postApi(agent, sim, '/business-api/orders', token, validOrder());
    expect(reply.status).toBe(401);
    expect(reply.json.code).toBe('TOKEN_INVALID');
  });

  it('POST reset clears counters and orders but keeps tokens valid and numbering restarts', async () => {
    const token = await fetchToken(agent, sim);
    await postApi(agent, sim, '/business-api/orders', token, validOrder());
    expect((await admin('reset', 'POST')).status).toBe(200);
    expect(sim.counters().ordersAccepted).toBe(0);
    expect(sim.counters().requests).toBe(0);
    expect(sim.orders()).toEqual([]);
    const again = await postApi(agent, sim, '/business-api/orders', token, validOrder());
    expect(again.json.orderId).toBe('SIM-1');
    expect(sim.counters().duplicateOrdersAccepted).toBe(0);
  });

  it('answers unknown admin paths with 404 and wrong methods with 405', async () => {
    expect((await admin('nothing')).status).toBe(404);
    expect((await admin('reset')).status).toBe(405);
    expect((await admin('counters', 'POST')).status).toBe(405);
  });
});
