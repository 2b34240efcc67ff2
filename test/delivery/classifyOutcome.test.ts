/** The classification table on its own: statuses, transport errors, Retry-After, field lookup. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { classifyOutcome, errorCode, parseRetryAfter, TRANSPORT_ERRORS } from '../../src/delivery/classifyOutcome.js';
import { findField, findValue } from '../../src/delivery/findField.js';
import type { HttpExchange } from '../../src/delivery/httpTransport.js';

const fields = loadConfig({ env: {} }).responseFields;
const NOW = Date.parse('2030-01-01T00:00:00Z');

function response(status: number, body: unknown = undefined, headers: Record<string, string> = {}): HttpExchange {
  return { type: 'response', status, headers, body, bodyTruncated: false };
}
const classify = (exchange: HttpExchange) => classifyOutcome(exchange, { fields, now: () => NOW });

describe('statuses', () => {
  it.each([
    [200, 'delivered'],
    [201, 'delivered'],
    [204, 'delivered'],
    [301, 'permanent'],
    [400, 'permanent'],
    [403, 'permanent'],
    [404, 'permanent'],
    [409, 'permanent'],
    [422, 'permanent'],
    [401, 'unauthorized'],
    [429, 'rateLimited'],
    [408, 'retry'],
    [425, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
  ])('%i is %s', (status, kind) => {
    expect(classify(response(status)).kind).toBe(kind);
  });

  it('the API code and message when the body has them, else our own', () => {
    expect(classify(response(422, { code: 'PRODUCT_UNKNOWN', message: 'no such product' }))).toMatchObject({
      code: 'PRODUCT_UNKNOWN',
      message: 'no such product',
    });
    expect(classify(response(404, 'Not here'))).toMatchObject({
      code: 'HTTP_404',
      message: 'HTTP 404 Not Found',
      body: 'Not here',
    });
  });

  it('the remote id from the configured fields, numbers as strings', () => {
    expect(classify(response(201, { orderId: 'A-1' }))).toMatchObject({ remoteId: 'A-1' });
    expect(classify(response(200, { id: 42 }))).toMatchObject({ remoteId: 42 }); // the JSON type is kept
    expect(classify(response(200, { data: { orderId: 'D-3' } }))).toMatchObject({ remoteId: 'D-3' });
    expect(classify(response(200, { status: 'ok' }))).not.toHaveProperty('remoteId');
  });
});

describe('ambiguous statuses (BULKORDER_AMBIGUOUS_STATUSES)', () => {
  it('turns the listed statuses into ambiguous, keeping the API code, and leaves the others alone', () => {
    const options = {
      fields,
      now: () => NOW,
      ambiguousStatuses: loadConfig({ env: { BULKORDER_AMBIGUOUS_STATUSES: '500,504' } }).ambiguousStatuses,
    };
    expect(classifyOutcome(response(500, { code: 'INTERNAL_ERROR', message: 'oops' }), options)).toEqual({
      kind: 'ambiguous',
      status: 500,
      code: 'INTERNAL_ERROR',
      message: 'oops',
    });
    expect(classifyOutcome(response(504), options)).toMatchObject({ kind: 'ambiguous', status: 504, code: 'HTTP_504' });
    expect(classifyOutcome(response(503), options)).toMatchObject({ kind: 'retry', status: 503 });
    expect(classify(response(500))).toMatchObject({ kind: 'retry' });
  });

  it('a listed 2xx is ambiguous with the API code; an unlisted 2xx is delivered with no code or message', () => {
    const options = { fields, now: () => NOW, ambiguousStatuses: [202] };
    expect(classifyOutcome(response(202, { code: 'ACCEPTED_LATER', orderId: 'A-1' }), options)).toEqual({
      kind: 'ambiguous',
      status: 202,
      code: 'ACCEPTED_LATER',
      message: 'HTTP 202 Accepted',
    });
    const body = { code: 'IGNORED', message: 'not read', orderId: 'A-2' };
    expect(classifyOutcome(response(201, body), options)).toEqual({
      kind: 'delivered',
      status: 201,
      body,
      remoteId: 'A-2',
    });
  });

  it('refuses a malformed list, naming the variable', () => {
    expect(() => loadConfig({ env: { BULKORDER_AMBIGUOUS_STATUSES: '500;504' } })).toThrow(
      /BULKORDER_AMBIGUOUS_STATUSES/,
    );
  });
});

describe('transport failures', () => {
  const fail = (code: string, requestStarted: boolean): HttpExchange => ({
    type: 'failure',
    requestStarted,
    error: Object.assign(new Error(`failed ${code}`), { code }),
  });

  it('not started is retry, started is ambiguous, whatever the code', () => {
    for (const [raw, { code }] of Object.entries(TRANSPORT_ERRORS)) {
      expect(classify(fail(raw, false))).toEqual({ kind: 'retry', code, message: `failed ${raw}` });
      expect(classify(fail(raw, true))).toEqual({ kind: 'ambiguous', code, message: `failed ${raw}` });
    }
    expect(classify(fail('EWHATEVER', true))).toMatchObject({ kind: 'ambiguous', code: 'NETWORK_ERROR' });
  });

  it('finds the code inside AggregateError (happy eyeballs) and causes', () => {
    const refused = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    expect(errorCode(new AggregateError([refused], 'all failed'))).toBe('ECONNREFUSED');
    expect(errorCode(new Error('outer', { cause: refused }))).toBe('ECONNREFUSED');
    expect(errorCode(new DOMException('stop', 'AbortError'))).toBe('ABORT_ERR');
  });
});

describe('Retry-After', () => {
  it('seconds, HTTP dates, past dates, garbage, and the cap', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfter('Mon, 31 Dec 2029 23:00:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter('-5', NOW)).toBeUndefined();
    expect(parseRetryAfter('999999', NOW)).toBe(3_600_000);
  });

  it('a 429 without it waits for the reset its rate-limit headers name (IETF draft, X-RateLimit-*), else 5 s', () => {
    const waitOf = (headers: Record<string, string>) => {
      const outcome = classify(response(429, undefined, headers));
      return outcome.kind === 'rateLimited' ? outcome.retryAfterMs : undefined;
    };
    expect(waitOf({ 'retry-after': '2', 'ratelimit-reset': '30' })).toBe(2000);
    expect(waitOf({ ratelimit: '"default";r=0;t=7' })).toBe(7000);
    expect(waitOf({ 'ratelimit-reset': '12' })).toBe(12_000);
    expect(waitOf({ 'x-ratelimit-reset': '3' })).toBe(3000);
    expect(waitOf({ 'x-ratelimit-reset': String(NOW / 1000 + 20) })).toBe(20_000);
    expect(waitOf({ 'x-ratelimit-reset': 'later' })).toBe(5000);
    expect(waitOf({})).toBe(5000);
  });
});

describe('findField', () => {
  it('tries names in order, walks dotted paths, skips objects and empty strings', () => {
    expect(findField({ error: { code: 'X' } }, ['error', 'error.code'])).toBe('X');
    expect(findField({ code: '', errorCode: 'Y' }, ['code', 'errorCode'])).toBe('Y');
    expect(findField('text', ['code'])).toBeUndefined();
    expect(findField([{ code: 'Z' }], ['0.code'])).toBeUndefined();
    expect(findField({ errors: [{ code: 'E1' }, { code: 'E2' }] }, ['errors.code', 'errors.0.code'])).toBe('E1'); // {errors:[...]} bodies
    expect(findValue({ data: { customerId: 100001 } }, ['data.customerId'])).toBe(100001);
  });
});

describe('a 2xx whose body is an error (BULKORDER_ERROR_BODY_FIELDS)', () => {
  it.each([
    [{ code: 'ORDER_FAILED', message: 'stock service down' }, 'ORDER_FAILED'],
    [{ error: 'internal' }, 'internal'],
    [{ error: { message: 'nested' } }, 'ERROR_BODY_2XX'],
    [{ errors: [{ code: 'X1' }] }, 'X1'],
  ])('%j without an order id is errorBody (%s), body kept', (body, code) => {
    expect(classify(response(200, body))).toMatchObject({ kind: 'errorBody', status: 200, code, body });
  });

  it.each([
    [{ code: 'CREATED', orderId: 'R-1' }],
    [{ error: null, id: 7 }],
    [{ error: '', errors: [] }],
    [true],
    [undefined],
    [{ ok: true }],
  ])('%j is delivered (an id, or no error said)', (body) => {
    expect(classify(response(201, body)).kind).toBe('delivered');
  });

  it("is configurable: 'none' records every 2xx delivered, a list of its own names its fields", () => {
    const none = loadConfig({ env: { BULKORDER_ERROR_BODY_FIELDS: 'none' } }).responseFields;
    expect(classifyOutcome(response(200, { code: 'X' }), { fields: none }).kind).toBe('delivered');
    const own = loadConfig({ env: { BULKORDER_ERROR_BODY_FIELDS: 'status.failed' } }).responseFields;
    expect(classifyOutcome(response(200, { status: { failed: true } }), { fields: own }).kind).toBe('errorBody');
    expect(classifyOutcome(response(200, { code: 'X' }), { fields: own }).kind).toBe('delivered');
  });
});
