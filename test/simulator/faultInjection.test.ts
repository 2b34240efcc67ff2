import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { errors, type Agent } from 'undici';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { createAgent, fetchToken, manualClock, postApi, send, validOrder, type Reply } from './simulatorHarness.js';

let agent: Agent;
const running: Simulator[] = [];

beforeAll(() => {
  agent = createAgent();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await agent.close();
});

async function start(
  options: SimulatorOptions = {},
): Promise<{ sim: Simulator; token: string; order: (body?: unknown, signal?: AbortSignal) => Promise<Reply> }> {
  const sim = await startSimulator(options);
  running.push(sim);
  const token = await fetchToken(agent, sim);
  return {
    sim,
    token,
    order: (body = validOrder(), signal) => postApi(agent, sim, '/business-api/orders', token, body, {}, signal),
  };
}

describe('serverErrorRate', () => {
  it('answers 5xx without storing: 500/502/503/504, JSON and HTML, Retry-After in seconds and as a date', async () => {
    const { sim, order } = await start({ faults: { serverErrorRate: 1, retryAfterSeconds: 7 } });
    const replies: Reply[] = [];
    for (let i = 0; i < 40; i++) replies.push(await order());
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([500, 502, 503, 504]));
    expect(replies.some((r) => r.headers['content-type']?.includes('text/html') && r.json === undefined)).toBe(true);
    expect(replies.some((r) => r.json?.code === 'INTERNAL_ERROR')).toBe(true);
    expect(replies.some((r) => r.headers['retry-after'] === '7')).toBe(true);
    const dated = replies.find((r) => typeof r.headers['retry-after'] === 'string' && r.headers['retry-after'] !== '7');
    expect(Date.parse(dated?.headers['retry-after'] as string)).not.toBeNaN();
    const counters = sim.counters();
    expect(counters.ordersAccepted).toBe(0);
    expect(counters.faults.serverError).toBe(40);
    expect(counters.statuses['201']).toBeUndefined();
  });

  it('injects the configured fraction, reproducibly from the seed', async () => {
    const statuses = async (seed: number): Promise<number[]> => {
      const { order } = await start({ seed, faults: { serverErrorRate: 0.25 } });
      const out: number[] = [];
      for (let i = 0; i < 200; i++) out.push((await order()).status);
      return out;
    };
    const a = await statuses(42);
    const b = await statuses(42);
    const c = await statuses(43);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const failed = a.filter((s) => s >= 500).length;
    // 200 draws at p = 0.25: 50 expected, outside [25, 75] has probability < 1e-6.
    expect(failed).toBeGreaterThan(25);
    expect(failed).toBeLessThan(75);
    expect(a.filter((s) => s === 201).length).toBe(200 - failed);
  });
});

describe('storedThenErrorRate', () => {
  it('stores the order, then answers 500 (a lost acknowledgement)', async () => {
    const { sim, order } = await start({ faults: { storedThenErrorRate: 1 } });
    const reply = await order();
    expect(reply.status).toBe(500);
    expect(reply.json.code).toBe('INTERNAL_ERROR');
    expect(sim.orders()).toHaveLength(1);
    sim.setFaults({ storedThenErrorRate: 0 });
    expect((await order()).status).toBe(201);
    const counters = sim.counters();
    expect(counters.ordersAccepted).toBe(2);
    expect(counters.duplicateOrdersAccepted).toBe(1);
    expect(counters.faults.storedThenError).toBe(1);
  });

  it('still refuses an invalid order (nothing stored), answering 500', async () => {
    const { sim, order } = await start({ faults: { storedThenErrorRate: 1 } });
    expect((await order({ ...validOrder(), businessCustomerId: 9 })).status).toBe(500);
    expect(sim.counters().ordersAccepted).toBe(0);
  });
});

describe('noAnswerRate', () => {
  it('stores the order and holds the socket open until the client gives up', async () => {
    const { sim, order } = await start({ faults: { noAnswerRate: 1 } });
    const controller = new AbortController();
    const pending = order(validOrder(), controller.signal);
    await vi.waitFor(() => expect(sim.counters().ordersAccepted).toBe(1));
    expect(sim.counters().inFlight).toBe(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await vi.waitFor(() => expect(sim.counters().inFlight).toBe(0));
    expect(sim.counters().faults.noAnswer).toBe(1);
    expect(sim.counters().statuses).toEqual({ '200': 1 }); // only the token answer
  });

  it('ends held sockets on close()', async () => {
    const { sim, order } = await start({ faults: { noAnswerRate: 1 } });
    const pending = order();
    await vi.waitFor(() => expect(sim.counters().inFlight).toBe(1));
    running.splice(running.indexOf(sim), 1);
    await sim.close();
    await expect(pending).rejects.toBeInstanceOf(errors.SocketError);
  });
});

describe('latencyMs and jitterMs', () => {
  it('delays the answer (the request stays in flight) and counts delayed requests', async () => {
    const { sim, order } = await start({ faults: { latencyMs: 60_000 } });
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const pending = controllers.map((c) => order(validOrder(), c.signal).catch(() => 'aborted'));
    await vi.waitFor(() => expect(sim.counters().inFlight).toBe(5));
    expect(sim.counters().peakConcurrency).toBe(5);
    expect(sim.counters().faults.latency).toBe(5);
    expect(sim.counters().ordersAccepted).toBe(0); // processing waits for the delay
    for (const c of controllers) c.abort();
    expect(await Promise.all(pending)).toEqual(Array(5).fill('aborted'));
    await vi.waitFor(() => expect(sim.counters().inFlight).toBe(0));
    expect(sim.counters().peakConcurrency).toBe(5);
  });

  it('answers normally with a small latency and jitter', async () => {
    const { sim, order } = await start({ faults: { latencyMs: 5, jitterMs: 10 } });
    expect((await order()).status).toBe(201);
    expect(sim.counters().faults.latency).toBe(1);
  });
});

describe('rateLimitPerSecond', () => {
  it('answers 429 + Retry-After above the limit in a sliding one-second window', async () => {
    const clock = manualClock();
    const { sim, order } = await start({ clock: clock.now, faults: { rateLimitPerSecond: 3, retryAfterSeconds: 2 } });
    const first = [await order(), await order(), await order()];
    expect(first.map((r) => r.status)).toEqual([201, 201, 201]);
    const limited = await order();
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe('RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe('2');
    clock.advance(999);
    expect((await order()).status).toBe(429);
    clock.advance(1);
    expect((await order()).status).toBe(201);
    expect((await order()).status).toBe(201);
    expect((await order()).status).toBe(201);
    expect((await order()).status).toBe(429);
    const counters = sim.counters();
    expect(counters.faults.rateLimited).toBe(3);
    expect(counters.errors.RATE_LIMITED).toBe(3);
    expect(counters.ordersAccepted).toBe(6);
  });

  it('does not limit the token endpoint', async () => {
    const clock = manualClock();
    const { sim } = await start({ clock: clock.now, faults: { rateLimitPerSecond: 1 } });
    await fetchToken(agent, sim);
    await fetchToken(agent, sim);
    expect(sim.counters().tokensIssued.business).toBe(3);
  });
});

describe('token faults', () => {
  it('tokenFailureRate answers 503 temporarily_unavailable with Retry-After, issuing nothing', async () => {
    const { sim } = await start();
    sim.setFaults({ tokenFailureRate: 1 });
    const { clientId, clientSecret } = sim.credentials.business;
    const reply = await send(agent, `${sim.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${clientId}&client_secret=${clientSecret}`,
    });
    expect(reply.status).toBe(503);
    expect(reply.json.error).toBe('temporarily_unavailable');
    expect(reply.headers['retry-after']).toBe('1');
    const counters = sim.counters();
    expect(counters.tokenRequests.business).toBe(2);
    expect(counters.tokensIssued.business).toBe(1);
    expect(counters.faults.tokenFailure).toBe(1);
  });

  it('tokenLatencyMs delays token answers and is counted', async () => {
    const { sim } = await start({ faults: { tokenLatencyMs: 5 } });
    await fetchToken(agent, sim);
    expect(sim.counters().faults.tokenLatency).toBe(2);
  });
});

describe('script', () => {
  it('forces the next answers in order, then behaves normally', async () => {
    const { sim, order } = await start();
    sim.setFaults({
      script: [
        { status: 503, body: { code: 'MAINTENANCE', message: 'later' }, headers: { 'retry-after': '30' } },
        { status: 502, body: '<html>bad gateway</html>' },
      ],
    });
    const a = await order();
    expect(a.status).toBe(503);
    expect(a.json).toEqual({ code: 'MAINTENANCE', message: 'later' });
    expect(a.headers['retry-after']).toBe('30');
    const b = await order();
    expect(b.status).toBe(502);
    expect(b.headers['content-type']).toMatch(/text\/html/);
    expect((await order()).status).toBe(201);
    const counters = sim.counters();
    expect(counters.faults.scripted).toBe(2);
    expect(counters.errors).toEqual({ MAINTENANCE: 1, HTTP_502: 1 });
    expect(counters.ordersAccepted).toBe(1);
    expect(sim.faults().script).toEqual([]);
  });

  it('applies an entry with a path only to that endpoint', async () => {
    const { sim, token, order } = await start();
    sim.setFaults({ script: [{ path: 'login', status: 500 }] });
    expect((await order()).status).toBe(201);
    const login = await postApi(agent, sim, '/cafetariaplan-api/login', await fetchToken(agent, sim, 'cafetariaplan'), {
      customerId: 'x',
    });
    expect(login.status).toBe(500);
    void token;
  });

  it('store: true runs the real handler (the order is stored) and answers the scripted status', async () => {
    const { sim, order } = await start({ faults: { script: [{ status: 504, store: true }] } });
    expect((await order()).status).toBe(504);
    expect(sim.counters().ordersAccepted).toBe(1);
  });

  it('noAnswer: true holds the request; with store it is stored first', async () => {
    const { sim, order } = await start({ faults: { script: [{ status: 200, store: true, noAnswer: true }] } });
    const controller = new AbortController();
    const pending = order(validOrder(), controller.signal);
    await vi.waitFor(() => expect(sim.counters().ordersAccepted).toBe(1));
    controller.abort();
    await expect(pending).rejects.toThrow();
  });

  it("path 'token' scripts the token endpoint, and only it", async () => {
    const sim = await startSimulator({
      faults: { script: [{ path: 'token', status: 500, body: { error: 'server_error' } }] },
    });
    running.push(sim);
    await expect(fetchToken(agent, sim)).rejects.toThrow(/500/);
    const token = await fetchToken(agent, sim);
    expect((await postApi(agent, sim, '/business-api/orders', token, validOrder())).status).toBe(201);
    expect(sim.counters().errors.server_error).toBe(1);
  });
});

describe('setFaults', () => {
  it.each([
    [{ serverErrorRate: 1.5 }, 'serverErrorRate'],
    [{ latencyMs: -1 }, 'latencyMs'],
    [{ serverErrorRate: 0.6, noAnswerRate: 0.6 }, 'serverErrorRate'],
    [{ latency: 5 }, 'latency'],
    [{ script: [{ status: 99 }] }, 'script[0].status'],
    [{ script: [{ status: 500, path: 'nowhere' }] }, 'script[0].path'],
  ])('refuses %j naming %s', async (patch, field) => {
    const { sim } = await start();
    expect(() => sim.setFaults(patch as never)).toThrow(
      expect.objectContaining({ code: 'SIMULATOR_FAULTS_INVALID', details: { field } }),
    );
  });

  it('merges into the faults in force', async () => {
    const { sim } = await start({ faults: { latencyMs: 3 } });
    sim.setFaults({ serverErrorRate: 0.1 });
    expect(sim.faults()).toMatchObject({ latencyMs: 3, serverErrorRate: 0.1, retryAfterSeconds: 1 });
  });
});
