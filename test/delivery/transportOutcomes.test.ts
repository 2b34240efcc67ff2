/**
 * Each classification through the real undici stack against loopback servers that misbehave
 * on purpose. The question every failure case answers: could the request have reached the
 * server (ambiguous) or provably not (retry)?
 */
import { recordReliability } from '../helpers/reliabilityLog.js';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { classifyOutcome, type Outcome } from '../../src/delivery/classifyOutcome.js';
import {
  createHttpTransport,
  type HttpTransport,
  type HttpTransportOptions,
} from '../../src/delivery/httpTransport.js';
import { closedPort, httpServer, tcpServer, type RawServer } from './support/rawServers.js';

const fields = loadConfig({ env: {} }).responseFields;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function transport(overrides: Partial<HttpTransportOptions> = {}): HttpTransport {
  const t = createHttpTransport({
    connectTimeoutMs: 300,
    headersTimeoutMs: 400,
    bodyTimeoutMs: 400,
    deadlineMs: 5000,
    ...overrides,
  });
  cleanups.push(() => t.close());
  return t;
}

function track(server: RawServer): RawServer {
  cleanups.push(() => server.close());
  return server;
}

async function post(url: string, t: HttpTransport = transport(), signal?: AbortSignal): Promise<Outcome> {
  const exchange = await t.send({
    method: 'POST',
    url: `${url}/orders`,
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
    signal,
  });
  return classifyOutcome(exchange, { fields, now: () => Date.parse('2030-01-01T00:00:00Z') });
}

/** Resolves once the server has seen `n` hits. */
async function until(server: RawServer, n = 1): Promise<void> {
  while (server.hits() < n) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('provably not sent: retry', () => {
  it('connection refused', async () => {
    const outcome = await post(`http://127.0.0.1:${await closedPort()}`);
    expect(outcome).toMatchObject({ kind: 'retry', code: 'CONNECT_REFUSED' });
  });

  it('connect timeout (TLS handshake never answered)', async () => {
    const server = track(await tcpServer({ protocol: 'https' }));
    const outcome = await post(server.url);
    expect(outcome).toMatchObject({ kind: 'retry', code: 'CONNECT_TIMEOUT' });
    expect(server.hits()).toBe(1);
    recordReliability({
      fault: 'a connect that never completes (TLS handshake never answered)',
      behaviour: 'connect timeout: classified retry, since the request provably never left',
      orders: 1,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  });

  it('cancelled before it was written', async () => {
    const server = track(await httpServer((_req, res) => res.end('{}')));
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    const outcome = await post(server.url, transport(), controller.signal);
    expect(outcome).toMatchObject({ kind: 'retry', code: 'ABORTED' });
    expect(server.hits()).toBe(0);
  });

  it('deadline passed while still connecting', async () => {
    const server = track(await tcpServer({ protocol: 'https' }));
    const outcome = await post(server.url, transport({ connectTimeoutMs: 1000, deadlineMs: 200 }));
    expect(outcome).toMatchObject({ kind: 'retry', code: 'DEADLINE_EXCEEDED' });
  });
});

describe('sent, no complete answer: ambiguous', () => {
  it('headers timeout after the request was read', async () => {
    let received = '';
    const server = track(await tcpServer({ onData: (_s, data) => (received += data.toString()) }));
    const outcome = await post(server.url);
    expect(outcome).toMatchObject({ kind: 'ambiguous', code: 'HEADERS_TIMEOUT' });
    expect(received).toContain('POST /orders');
  });

  it('connection reset before any answer', async () => {
    const server = track(await tcpServer({ onData: (socket) => socket.resetAndDestroy() }));
    const outcome = await post(server.url);
    expect(outcome.kind).toBe('ambiguous');
    expect(['CONNECTION_RESET', 'SOCKET_CLOSED']).toContain((outcome as { code: string }).code);
  });

  it('connection closed in the middle of the status line', async () => {
    const server = track(await tcpServer({ onData: (socket) => socket.end('HTTP/1.1 20') }));
    expect((await post(server.url)).kind).toBe('ambiguous');
  });

  it('deadline passed while waiting for the answer', async () => {
    const server = track(await tcpServer({}));
    const outcome = await post(server.url, transport({ headersTimeoutMs: 10_000, deadlineMs: 300 }));
    expect(outcome).toMatchObject({ kind: 'ambiguous', code: 'DEADLINE_EXCEEDED' });
  });

  it('cancelled after it was written', async () => {
    const server = track(await tcpServer({}));
    const controller = new AbortController();
    const pending = post(server.url, transport({ headersTimeoutMs: 10_000 }), controller.signal);
    await until(server);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    expect(await pending).toMatchObject({ kind: 'ambiguous', code: 'ABORTED' });
  });

  it('is never retried by the transport: one reset, one request at the server', async () => {
    const server = track(await tcpServer({ onData: (socket) => socket.resetAndDestroy() }));
    await post(server.url);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.hits()).toBe(1);
  });
});

describe('the status line decides once it has arrived', () => {
  it('201 whose body is cut off is still delivered', async () => {
    const server = track(
      await tcpServer({
        onData: (socket) =>
          socket.end(
            'HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"orderId":',
          ),
      }),
    );
    expect(await post(server.url)).toMatchObject({ kind: 'delivered', status: 201 });
  });

  it('503 whose body stalls (body timeout) is retry', async () => {
    const server = track(
      await tcpServer({
        onData: (socket) => socket.write('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 100\r\n\r\nsorry'),
      }),
    );
    expect(await post(server.url)).toMatchObject({ kind: 'retry', status: 503, code: 'HTTP_503' });
  });

  it('400 whose body trickles past the deadline is permanent and marked truncated', async () => {
    const server = track(
      await tcpServer({
        onData: (socket) => {
          socket.write(
            'HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
          );
          const timer = setInterval(() => socket.write('1\r\n \r\n'), 50);
          socket.on('close', () => clearInterval(timer));
        },
      }),
    );
    const outcome = await post(server.url, transport({ deadlineMs: 600 }));
    expect(outcome).toMatchObject({ kind: 'permanent', status: 400, bodyTruncated: true });
  });
});

describe('answers', () => {
  it('2xx: body kept, remote id from the body or else from Location', async () => {
    const server = track(
      await httpServer((req, res) => {
        if (req.url === '/orders') res.writeHead(201, { location: '/business-api/orders/ORD-77' }).end();
      }),
    );
    expect(await post(server.url)).toEqual({ kind: 'delivered', status: 201, body: undefined, remoteId: 'ORD-77' });
  });

  it('error bodies over 16 KiB are cut at the cap, marked truncated, kept raw', async () => {
    const big = JSON.stringify({ code: 'TOO_MUCH', message: 'x'.repeat(100_000) });
    const server = track(
      await httpServer((_req, res) => res.writeHead(400, { 'content-type': 'application/json' }).end(big)),
    );
    const outcome = await post(server.url);
    expect(outcome).toMatchObject({ kind: 'permanent', status: 400, code: 'HTTP_400', bodyTruncated: true });
    expect(typeof (outcome as { body: unknown }).body).toBe('string');
    expect((outcome as { body: string }).body.length).toBe(16 * 1024);
  });

  it('a huge error body is abandoned, not buffered', async () => {
    const server = track(
      await httpServer((_req, res) =>
        res.writeHead(422, { 'content-type': 'text/plain' }).end(Buffer.alloc(8 * 1024 * 1024, 'y')),
      ),
    );
    const outcome = await post(server.url);
    expect(outcome).toMatchObject({ kind: 'permanent', status: 422, bodyTruncated: true });
  });

  it('non-JSON 5xx: our own code, the raw body kept', async () => {
    const server = track(
      await httpServer((_req, res) =>
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>'),
      ),
    );
    expect(await post(server.url)).toMatchObject({
      kind: 'retry',
      status: 502,
      code: 'HTTP_502',
      body: '<html>Bad gateway</html>',
    });
  });

  it('API error codes under other field names', async () => {
    const bodies = [
      [{ errorCode: 'E1', detail: 'first' }, 'E1', 'first'],
      [{ error: { code: 'E2', message: 'second' } }, 'E2', 'second'],
      [{ error: 'invalid_request', error_description: 'third' }, 'invalid_request', 'third'],
    ] as const;
    for (const [body, code, message] of bodies) {
      const server = track(
        await httpServer((_req, res) =>
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
        ),
      );
      expect(await post(server.url)).toMatchObject({ kind: 'permanent', code, message, body });
    }
  });

  it('429 with Retry-After in seconds, as a date, or absent', async () => {
    const headers = [{ 'retry-after': '3' }, { 'retry-after': 'Tue, 01 Jan 2030 00:00:07 GMT' }, {}];
    const waits: number[] = [];
    for (const extra of headers) {
      const server = track(await httpServer((_req, res) => res.writeHead(429, extra).end()));
      const outcome = await post(server.url);
      expect(outcome.kind).toBe('rateLimited');
      waits.push((outcome as { retryAfterMs: number }).retryAfterMs);
    }
    expect(waits).toEqual([3000, 7000, 5000]);
  });

  it('503 carries its Retry-After', async () => {
    const server = track(
      await httpServer((_req, res) =>
        res
          .writeHead(503, { 'retry-after': '2', 'content-type': 'application/json' })
          .end('{"code":"MAINTENANCE","message":"back soon"}'),
      ),
    );
    expect(await post(server.url)).toMatchObject({
      kind: 'retry',
      status: 503,
      retryAfterMs: 2000,
      code: 'MAINTENANCE',
      message: 'back soon',
    });
  });
});
