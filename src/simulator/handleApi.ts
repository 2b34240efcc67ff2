/**
 * One request to the Business or Cafetariaplan API. Faults are decided first (scripted answer,
 * rate limit, 5xx); then the checks run in the order a gateway and an application would:
 * Bearer token, User-Agent, Content-Type, body size, JSON, payload rules, catalogue rules.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiError, writeAnswer, type Answer } from './answer.js';
import { shapeError } from './answerProfile.js';
import { readBody } from './readBody.js';
import { sleep } from './sleep.js';
import { lostAcknowledgementAnswer, serverErrorAnswer } from './serverErrorAnswer.js';
import { scriptedAnswer } from './scriptedAnswer.js';
import { API_BODY_CAP, type SimulatorContext } from './simulatorContext.js';
import type { ApiName, ScriptPath } from './simulatorTypes.js';
import { userAgentProblem } from './userAgent.js';
import { validateAccount, validateLogin } from './validateAccount.js';
import { canonicalOrder } from './canonicalOrder.js';
import { validateOrder, type ValidOrder } from './validateOrder.js';

/** A known API endpoint. */
export interface ApiRoute {
  api: ApiName;
  path: Exclude<ScriptPath, 'token'>;
}

/** The API endpoints by URL path; all take POST. */
export const API_ROUTES: ReadonlyMap<string, ApiRoute> = new Map([
  ['/business-api/orders', { api: 'business', path: 'orders' }],
  ['/cafetariaplan-api/accounts', { api: 'cafetariaplan', path: 'accounts' }],
  ['/cafetariaplan-api/login', { api: 'cafetariaplan', path: 'login' }],
]);

const BEARER_CHALLENGE = { 'www-authenticate': 'Bearer realm="simulator"' } as const;
const INVALID_TOKEN_CHALLENGE = { 'www-authenticate': 'Bearer realm="simulator", error="invalid_token"' } as const;
// fatal: invalid UTF-8 is refused rather than silently replaced with U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Handles one POST to a known API route. */
export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: SimulatorContext,
  route: ApiRoute,
): Promise<void> {
  const { counters } = ctx;
  counters.apiRequest(route.api);
  counters.enterFlight();
  res.once('close', () => counters.leaveFlight());

  const decision = ctx.faults.decideApi(route.path, ctx.clock());
  if (decision.fate !== 'normal')
    ctx.logger.debug({ fault: decision.fate, path: route.path }, 'simulator injects a fault');
  if (decision.delayMs > 0) await sleep(decision.delayMs);
  switch (decision.fate) {
    case 'rateLimited': {
      const retryAfter = String(Math.max(1, Math.ceil(ctx.faults.faults.retryAfterSeconds)));
      writeAnswer(
        res,
        apiError(429, 'RATE_LIMITED', 'Too many requests; retry after the time in Retry-After.', {
          headers: {
            'retry-after': retryAfter,
          },
        }),
        counters,
      );
      return;
    }
    case 'serverError':
      writeAnswer(res, serverErrorAnswer(decision.variant, ctx.faults.faults.retryAfterSeconds), counters);
      return;
    case 'scripted': {
      const scripted = decision.scripted;
      if (scripted === undefined) break;
      if (scripted.store) {
        if ((await processRequest(req, ctx, route)) === undefined) return;
      } else if (scripted.noAnswer) {
        await readBody(req, API_BODY_CAP);
      }
      if (scripted.noAnswer) ctx.hold(res);
      else writeAnswer(res, scriptedAnswer(scripted), counters);
      return;
    }
    default:
      break;
  }
  const answer = await processRequest(req, ctx, route);
  if (answer === undefined) return; // the client went away mid-body
  if (decision.fate === 'storedThenError') writeAnswer(res, lostAcknowledgementAnswer(), counters);
  else if (decision.fate === 'noAnswer') ctx.hold(res);
  else writeAnswer(res, answer, counters);
}

/**
 * Runs every check and, when they pass, the endpoint's effect, answered in the profile's shapes.
 * Undefined when the body never arrived.
 */
async function processRequest(
  req: IncomingMessage,
  ctx: SimulatorContext,
  route: ApiRoute,
): Promise<Answer | undefined> {
  const answer = await processChecked(req, ctx, route);
  return answer === undefined ? undefined : shapeError(answer, ctx.profile);
}

async function processChecked(
  req: IncomingMessage,
  ctx: SimulatorContext,
  route: ApiRoute,
): Promise<Answer | undefined> {
  // Creates may carry an Idempotency-Key; counted always, honoured when the profile says so.
  const key = route.path === 'login' ? undefined : singleHeader(req.headers['idempotency-key']);
  if (key !== undefined) ctx.counters.idempotencyKey();
  const refused = checkHeaders(req, ctx, route.api);
  if (refused !== undefined) return refused;
  const read = await readBody(req, API_BODY_CAP);
  if (!read.ok) {
    if (read.reason === 'aborted') return undefined;
    return apiError(413, 'PAYLOAD_TOO_LARGE', `The request body exceeds ${API_BODY_CAP} bytes.`, {
      headers: {
        connection: 'close',
      },
    });
  }
  let body: unknown;
  try {
    body = JSON.parse(utf8.decode(read.body));
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : 'the body is not valid UTF-8';
    return apiError(400, 'MALFORMED_JSON', `The request body is not valid JSON: ${reason}`);
  }
  const replayKey = key === undefined || ctx.profile.idempotency !== 'honour' ? undefined : `${route.path}\n${key}`;
  const earlier = replayKey === undefined ? undefined : ctx.idempotent.get(replayKey);
  if (earlier !== undefined) {
    ctx.counters.idempotentReplay();
    return earlier;
  }
  const answer = createFor(route.path, ctx, body, key);
  // Only a create that happened is replayed; a refusal may be fixed and sent again under the same key.
  if (replayKey !== undefined && answer.status < 300) ctx.idempotent.set(replayKey, answer);
  return answer;
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === '' ? undefined : text.trim();
}

function checkHeaders(req: IncomingMessage, ctx: SimulatorContext, api: ApiName): Answer | undefined {
  const authorization = req.headers.authorization;
  const match = authorization === undefined ? null : /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization);
  if (match === null) {
    return apiError(401, 'TOKEN_MISSING', 'An Authorization: Bearer <access token> header is required.', {
      headers: BEARER_CHALLENGE,
    });
  }
  const check = ctx.tokens.check(match[1] as string, api, ctx.clock());
  if (!check.ok) return apiError(401, check.code, check.message, { headers: INVALID_TOKEN_CHALLENGE });

  const agentProblem = userAgentProblem(req.headers['user-agent']);
  if (agentProblem !== undefined)
    return apiError(ctx.profile.userAgentRefusal.status, ctx.profile.userAgentRefusal.code, agentProblem);

  if (!isJsonContentType(req.headers['content-type'])) {
    return apiError(
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      'The request body must be sent with Content-Type: application/json.',
    );
  }
  return undefined;
}

/** application/json, optionally with charset=utf-8 (any other charset is refused). */
function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [type, ...params] = value.split(';');
  if (type?.trim().toLowerCase() !== 'application/json') return false;
  return params.every((param) => {
    const [name, raw] = param.split('=');
    if (name?.trim().toLowerCase() !== 'charset') return true;
    return raw?.trim().replace(/^"|"$/g, '').toLowerCase() === 'utf-8';
  });
}

function createOrder(ctx: SimulatorContext, body: unknown, idempotencyKey: string | undefined): Answer {
  const { profile } = ctx;
  const customer = (body as { businessCustomerId?: unknown } | null)?.businessCustomerId;
  if (typeof customer === 'number' && ctx.faults.faults.forbiddenCustomers.includes(customer)) {
    return apiError(403, 'UNKNOWN_CUSTOMER', `This client may not order for business customer ${customer}.`);
  }
  const refused = validateOrder(body, ctx.customers, ctx.products);
  if (refused !== undefined)
    return refused.code === 'CUSTOMER_UNKNOWN' ? { ...refused, status: profile.unknownCustomerStatus } : refused;
  const { orderId, number, duplicate } = ctx.orders.store(
    body,
    canonicalOrder(body as ValidOrder),
    ctx.clock(),
    idempotencyKey,
  );
  ctx.counters.orderAccepted(duplicate);
  const id = profile.ids === 'string' ? orderId : numericId(number, profile.ids);
  if (!profile.success.body)
    return { status: profile.success.status, headers: { location: `/business-api/orders/${id}` } };
  return { status: profile.success.status, body: { orderId: id, status: 'received' } };
}

function createAccount(ctx: SimulatorContext, body: unknown): Answer {
  const refused = validateAccount(body);
  if (refused !== undefined) return refused;
  const { companyId, email } = body as { companyId: string; email: string };
  const customerId = ctx.accounts.create(companyId, email);
  if (customerId === undefined) {
    return apiError(409, 'ACCOUNT_EXISTS', 'An account with this e-mail already exists for this company.', {
      details: [{ path: 'email', problem: 'already has an account for this companyId' }],
    });
  }
  ctx.counters.accountCreated();
  // The customerId is the one thing a client needs back, so every profile answers with a body.
  return { status: ctx.profile.success.status, body: { customerId } };
}

function login(ctx: SimulatorContext, body: unknown): Answer {
  const refused = validateLogin(body, ctx.profile.ids);
  if (refused !== undefined) return refused;
  const { customerId } = body as { customerId: string | number };
  const code = ctx.accounts.login(customerId, ctx.clock() + ctx.loginCodeLifetimeMs);
  if (code === undefined) return apiError(404, 'CUSTOMER_NOT_FOUND', `No account has customerId ${customerId}.`);
  ctx.counters.login();
  const url = `${ctx.url}/sso/${code}`;
  switch (ctx.profile.loginUrl) {
    case 'loginUrl':
      return { status: 200, body: { loginUrl: url } };
    case 'url':
      return { status: 200, body: { url, expiresIn: 300 } };
    case 'nested':
      // A field name no configuration lists: only "the one absolute URL in the body" finds it.
      return {
        status: 200,
        body: { session: { customer: customerId, links: { sso: url, help: 'see the portal' } }, expiresIn: 300 },
      };
  }
}

/** The create (or login) a POST to the route asks for. */
function createFor(
  path: ApiRoute['path'],
  ctx: SimulatorContext,
  body: unknown,
  idempotencyKey: string | undefined,
): Answer {
  if (path === 'orders') return createOrder(ctx, body, idempotencyKey);
  return path === 'accounts' ? createAccount(ctx, body) : login(ctx, body);
}

/** A numeric id as a JSON integer or as its digits (the answer profile). */
function numericId(number: number, ids: 'integer' | 'digits'): string | number {
  return ids === 'digits' ? String(number) : number;
}
