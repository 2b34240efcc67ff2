/**
 * GET /sso/<code>: where a one-time login URL leads the employee's browser. The first visit
 * answers 200; any later one (or one after the code's lifetime) answers 410 Gone.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiError, writeAnswer } from './answer.js';
import type { SimulatorContext } from './simulatorContext.js';

/** Handles one visit to a login URL; `code` is the path segment after /sso/. */
export function handleSso(req: IncomingMessage, res: ServerResponse, ctx: SimulatorContext, code: string): void {
  if (req.method !== 'GET') {
    writeAnswer(
      res,
      apiError(405, 'METHOD_NOT_ALLOWED', 'Login URLs are opened with GET.', { headers: { allow: 'GET' } }),
      ctx.counters,
    );
    return;
  }
  const outcome = ctx.accounts.redeem(code, ctx.clock());
  if (outcome === 'ok') {
    ctx.counters.ssoRedeemed();
    const page =
      '<!doctype html><html><head><title>Signed in</title></head><body><p>Signed in: spend your cafetaria budget.</p></body></html>\n';
    writeAnswer(res, { status: 200, body: page, headers: { 'cache-control': 'no-store' } }, ctx.counters);
  } else if (outcome === 'unknown') {
    writeAnswer(res, apiError(404, 'NOT_FOUND', 'This login URL is not known.'), ctx.counters);
  } else {
    const code = outcome === 'used' ? 'LOGIN_URL_USED' : 'LOGIN_URL_EXPIRED';
    writeAnswer(
      res,
      apiError(410, code, outcome === 'used' ? 'This login URL has already been used.' : 'This login URL has expired.'),
      ctx.counters,
    );
  }
}
