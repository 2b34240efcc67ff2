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
