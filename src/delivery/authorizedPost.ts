/**
 * One authorized JSON POST to an API, shared by both clients: Bearer + User-Agent + JSON,
 * classification, logging, and the single token refresh on 401. A 401 means the API refused
 * the request at the door, so sending it once more with a new token cannot duplicate anything.
 */
import type { ApiName, ApiSettings } from '../config.js';
import { isBulkorderError } from '../errors.js';
import type { Logger } from '../logger.js';
import { classifyOutcome, type ClassifyOptions, type Outcome } from './classifyOutcome.js';
import type { HttpTransport } from './httpTransport.js';
import { redactSecrets } from './redactSecrets.js';
import type { AccessToken } from './tokenEndpoint.js';
import type { TokenProvider } from './tokenProvider.js';

/** What a client is given (STYLE habit 6): nothing is built inside it. */
export interface ApiClientDeps {
  transport: HttpTransport;
  tokenProvider: TokenProvider;
  logger: Logger;
  /** Retry-After defaults and the clock; field names come from the settings. */
  classify?: Omit<ClassifyOptions, 'fields'>;
}

export interface PostOptions {
  /** Cancels the request (shutdown); after sending it yields an `ambiguous` outcome. */
  signal?: AbortSignal;
  /**
   * The record's stable key, sent in `settings.idempotencyHeader` (Idempotency-Key) when that is
   * on: every attempt of one record carries the same key, so an API that honours it stores it once.
   */
  idempotencyKey?: string;
}

/** One POST: where, what, and how (PostOptions). */
export interface PostRequest extends PostOptions {
  /** The path under `settings.apiBaseUrl` (`/orders`). */
  path: string;
  /** The body, sent as JSON. */
  payload: unknown;
}

/** POSTs `payload` as JSON to `settings.apiBaseUrl + path` and classifies the answer. Never throws for remote failures. */
export async function authorizedPost(
  settings: ApiSettings,
  deps: ApiClientDeps,
  request: PostRequest,
): Promise<Outcome> {
  const { path, payload, ...options } = request;
  const url = `${settings.apiBaseUrl}${path}`;
  // Bound per line rather than with logger.child(): this runs once per request.
  const logger = deps.logger;
  const where = { api: settings.api, path };
  const body = JSON.stringify(payload);
  const classify: ClassifyOptions = {
    ...deps.classify,
    fields: settings.responseFields,
    ambiguousStatuses: settings.ambiguousStatuses,
  };

  const send = async (token: AccessToken): Promise<Outcome> => {
    const exchange = await deps.transport.send({
      method: 'POST',
      url,
      headers: {
        authorization: `Bearer ${token.value}`,
        'user-agent': settings.userAgent,
        'content-type': 'application/json',
        accept: 'application/json',
        ...(settings.idempotencyHeader === undefined || options.idempotencyKey === undefined
          ? {}
          : { [settings.idempotencyHeader]: options.idempotencyKey }),
      },
      body,
      signal: options.signal,
    });
    // A careless server may echo the token or our secret back; neither may reach a log or a dead letter.
    return redactSecrets(classifyOutcome(exchange, classify), [token.value, settings.clientSecret.reveal()]);
  };

  const first = await tokenOr(settings.api, deps.tokenProvider);
  if ('kind' in first) return report(logger, where, first);
  let outcome = await send(first.token);
  if (outcome.kind === 'unauthorized') {
    logger.info(
      { ...where, status: outcome.status, code: outcome.code, tokenId: first.token.id },
      'API refused the access token; refreshing once',
    );
    await deps.tokenProvider.invalidate(first.token);
    const second = await tokenOr(settings.api, deps.tokenProvider);
    if ('kind' in second) return report(logger, where, second);
    outcome = await send(second.token);
  }
  return report(logger, where, outcome);
}

/**
 * A token, or the outcome a token failure means for the request (which was never sent):
 * refused credentials -> unauthorized; an unavailable token endpoint or Redis -> retry.
 */
async function tokenOr(api: ApiName, provider: TokenProvider): Promise<{ token: AccessToken } | Outcome> {
  try {
    return { token: await provider.getToken() };
  } catch (error) {
    if (!isBulkorderError(error)) throw error;
    if (error.code === 'TOKEN_REFUSED') {
      const status = typeof error.details?.status === 'number' ? error.details.status : 401;
      return { kind: 'unauthorized', status, code: error.code, message: `${api} API: ${error.message}` };
    }
    return { kind: 'retry', code: error.code, message: error.message };
  }
}

function report(logger: Logger, where: { api: string; path: string }, outcome: Outcome): Outcome {
  if (outcome.kind === 'delivered') {
    // Checked first: at info (the default) the line's object is never built, once per request.
    if (logger.isLevelEnabled('debug'))
      logger.debug({ ...where, status: outcome.status, remoteId: outcome.remoteId }, 'API accepted the request');
  } else if (outcome.kind === 'permanent') {
    logger.warn(
      {
        ...where,
        status: outcome.status,
        code: outcome.code,
        message: outcome.message,
        body: outcome.body,
        bodyTruncated: outcome.bodyTruncated,
      },
      'API refused the request',
    );
  } else {
    const { kind, code, message } = outcome;
    const status = 'status' in outcome ? outcome.status : undefined;
    const body = 'body' in outcome ? outcome.body : undefined;
    logger.warn({ ...where, kind, status, code, message, body }, 'API request failed');
  }
  return outcome;
}
