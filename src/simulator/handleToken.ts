/**
 * POST /oauth2/token: the client-credentials grant (RFC 6749 4.4), with the client
 * authenticated by form fields (as the spec shows) or HTTP Basic (RFC 6749 2.3.1), never both.
 * Errors follow RFC 6749 5.2: `{ error, error_description }`, 400 or 401.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeAnswer, type Answer } from './answer.js';
import { readBody } from './readBody.js';
import { sleep } from './sleep.js';
import { scriptedAnswer } from './scriptedAnswer.js';
import { TOKEN_BODY_CAP, type SimulatorContext } from './simulatorContext.js';
import type { ApiName } from './simulatorTypes.js';

// RFC 6749 5.1: token answers must not be cached.
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** Handles one request to the token endpoint. */
export async function handleToken(req: IncomingMessage, res: ServerResponse, ctx: SimulatorContext): Promise<void> {
  if (req.method !== 'POST') {
    writeAnswer(
      res,
      oauthError(405, 'invalid_request', 'The token endpoint accepts POST only.', { allow: 'POST' }),
      ctx.counters,
    );
    return;
  }
  const read = await readBody(req, TOKEN_BODY_CAP);
  if (!read.ok) {
    if (read.reason === 'tooLarge')
      writeAnswer(
        res,
        oauthError(413, 'invalid_request', 'The token request is too large.', { connection: 'close' }),
        ctx.counters,
      );
    return;
  }
  const request = parseTokenRequest(req, read.body);
  const api = apiOf(ctx, request.clientId);
  ctx.counters.tokenRequest(api ?? 'unknown');

  const decision = ctx.faults.decideToken();
  if (decision.delayMs > 0) await sleep(decision.delayMs);
  if (decision.fate === 'tokenFailure') {
    const retryAfter = String(Math.ceil(ctx.faults.faults.retryAfterSeconds));
    writeAnswer(
      res,
      oauthError(503, 'temporarily_unavailable', 'The token service is temporarily unavailable.', {
        'retry-after': retryAfter,
      }),
      ctx.counters,
    );
    return;
  }
  const scripted = decision.scripted;
  if (scripted !== undefined && !scripted.store) {
    if (scripted.noAnswer) ctx.hold(res);
    else writeAnswer(res, scriptedAnswer(scripted), ctx.counters);
    return;
  }
  const answer = grant(ctx, request, api);
  if (scripted?.noAnswer) ctx.hold(res);
  else writeAnswer(res, scripted === undefined ? answer : scriptedAnswer(scripted), ctx.counters);
}

interface TokenRequest {
  contentTypeOk: boolean;
  params: URLSearchParams | undefined;
  duplicate: string | undefined;
  basic: { clientId: string; clientSecret: string } | 'malformed' | undefined;
  clientId: string | undefined;
}

function parseTokenRequest(req: IncomingMessage, body: Buffer): TokenRequest {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  const contentTypeOk = type === 'application/x-www-form-urlencoded';
  const params = contentTypeOk ? new URLSearchParams(body.toString('utf8')) : undefined;
  let duplicate: string | undefined;
  if (params !== undefined) {
    const seen = new Set<string>();
    for (const key of params.keys()) {
      if (seen.has(key)) duplicate = key;
      seen.add(key);
    }
  }
  const basic = parseBasic(req.headers.authorization);
  const clientId = typeof basic === 'object' ? basic.clientId : (params?.get('client_id') ?? undefined);
  return { contentTypeOk, params, duplicate, basic, clientId };
}

/** RFC 6749 2.3.1: Basic base64(urlencode(id) ":" urlencode(secret)). */
function parseBasic(header: string | undefined): TokenRequest['basic'] {
  if (header === undefined) return undefined;
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (match === null) return /^Basic\b/i.test(header) ? 'malformed' : undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
}

function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

function grant(ctx: SimulatorContext, request: TokenRequest, api: ApiName | undefined): Answer {
  const { params, basic } = request;
  if (!request.contentTypeOk || params === undefined) {
    return oauthError(400, 'invalid_request', 'The token request must be application/x-www-form-urlencoded.');
  }
  if (request.duplicate !== undefined)
    return oauthError(400, 'invalid_request', `The parameter ${request.duplicate} appears more than once.`);
  const grantType = params.get('grant_type');
  if (grantType === null || grantType === '')
    return oauthError(400, 'invalid_request', 'The parameter grant_type is required.');
  if (grantType !== 'client_credentials')
    return oauthError(400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported.');

  // A client that tried Basic gets a Basic challenge (RFC 6749 5.2).
  const challenge =
    basic === undefined ? undefined : { 'www-authenticate': 'Basic realm="simulator", charset="UTF-8"' };
  if (basic === 'malformed')
    return oauthError(401, 'invalid_client', 'The Basic authorization header is malformed.', challenge);
  let secret: string | null;
  if (basic !== undefined) {
    if (params.has('client_secret'))
      return oauthError(
        400,
        'invalid_request',
        'Use one client authentication method: Basic or form fields, not both.',
      );
    const bodyId = params.get('client_id');
    if (bodyId !== null && bodyId !== basic.clientId)
      return oauthError(400, 'invalid_request', 'client_id in the body differs from the Basic credentials.');
    secret = basic.clientSecret;
  } else {
    secret = params.get('client_secret');
  }
  if (request.clientId === undefined || request.clientId === '' || secret === null) {
    return oauthError(
      401,
      'invalid_client',
      'Client authentication is required (client_id and client_secret).',
      challenge,
    );
  }
  if (api === undefined || !sameSecret(secret, ctx.credentials[api].clientSecret)) {
    return oauthError(
      401,
      'invalid_client',
      'Client authentication failed: unknown client or wrong secret.',
      challenge,
    );
  }
  const now = ctx.clock();
  const accessToken = ctx.tokens.issue(api, now + ctx.tokenLifetimeSeconds * 1000, now);
  ctx.counters.tokenIssued(api);
  return {
    status: 200,
    body: { access_token: accessToken, token_type: 'Bearer', expires_in: ctx.tokenLifetimeSeconds },
    headers: { ...NO_STORE },
  };
}

function apiOf(ctx: SimulatorContext, clientId: string | undefined): ApiName | undefined {
  if (clientId === undefined) return undefined;
  if (clientId === ctx.credentials.business.clientId) return 'business';
  if (clientId === ctx.credentials.cafetariaplan.clientId) return 'cafetariaplan';
  return undefined;
}

// Constant-time comparison, as a real server would do for a secret.
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function oauthError(status: number, error: string, description: string, headers?: Record<string, string>): Answer {
  return { status, body: { error, error_description: description }, code: error, headers: { ...NO_STORE, ...headers } };
}
