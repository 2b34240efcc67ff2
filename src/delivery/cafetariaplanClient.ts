/**
 * The Cafetariaplan API: create an employee account, then ask for a one-time login URL.
 * Names of the answers' fields are "not shown" in the spec; they come from
 * Config.responseFields (customerId, loginUrl) and are checked here.
 */
import type { ApiSettings } from '../config.js';
import { authorizedPost, type ApiClientDeps, type PostOptions } from './authorizedPost.js';
import type { Outcome } from './classifyOutcome.js';
import { ABSOLUTE_URL, findField, findUrls, findValue } from './findField.js';
import type { RemoteId } from './remoteId.js';

/** The account creation request, exactly the spec's fields. */
export interface AccountRequest {
  email: string;
  firstName: string;
  lastName: string;
  /** Two-letter lowercase ISO 639-1 code. */
  isoLanguageCode: string;
  /** The employer's company id (UUID). */
  companyId: string;
}

type Undelivered = Exclude<Outcome, { kind: 'delivered' }>;

/**
 * Delivered carries the new account's `customerId` with the JSON type the API gave it (string
 * or number: the spec does not show it); `login` must send it back the same way.
 */
export type AccountOutcome = Undelivered | { kind: 'delivered'; status: number; body: unknown; customerId: RemoteId };

/** Delivered carries the one-time `loginUrl`. */
export type LoginOutcome = Undelivered | { kind: 'delivered'; status: number; body: unknown; loginUrl: string };

export interface CafetariaplanClient {
  /** Registers an employee (pass the account key as `options.idempotencyKey`). 409 (account exists) is `permanent` with the API's code. */
  createAccount(account: AccountRequest, options?: PostOptions): Promise<AccountOutcome>;
  /** Asks for a one-time login URL for `customerId`, sent with the JSON type it has (as account creation returned it). */
  login(customerId: RemoteId, options?: PostOptions): Promise<LoginOutcome>;
}

/** A client for the Cafetariaplan API; `settings` from `requireApi(config, 'cafetariaplan')`. */
export function createCafetariaplanClient(settings: ApiSettings, deps: ApiClientDeps): CafetariaplanClient {
  if (settings.api !== 'cafetariaplan')
    throw new Error(`createCafetariaplanClient needs cafetariaplan settings, got ${settings.api}`);
  const fields = settings.responseFields;
  return {
    async createAccount(account, options) {
      const outcome = await authorizedPost(settings, deps, { path: '/accounts', payload: account, ...options });
      if (outcome.kind !== 'delivered') return outcome;
      const customerId = findValue(outcome.body, fields.customerId);
      if (customerId === undefined) {
        // The account exists now but we cannot name it; posting again would only meet a 409.
        deps.logger.warn(
          { api: settings.api, status: outcome.status, body: outcome.body },
          'account created but no customerId found in the answer',
        );
        return {
          kind: 'ambiguous',
          status: outcome.status,
          code: 'CUSTOMER_ID_MISSING',
          message: `HTTP ${outcome.status} without any of the fields ${fields.customerId.join(', ')} (BULKORDER_CUSTOMER_ID_FIELDS)`,
        };
      }
      return { kind: 'delivered', status: outcome.status, body: outcome.body, customerId };
    },
    async login(customerId, options) {
      const outcome = await authorizedPost(settings, deps, { path: '/login', payload: { customerId }, ...options });
      if (outcome.kind !== 'delivered') return outcome;
      const found = loginUrlIn(outcome.body, fields.loginUrl);
      if ('problem' in found) {
        return {
          kind: 'permanent',
          status: outcome.status,
          code: found.problem,
          message: `HTTP ${outcome.status}: ${found.message}`,
          body: outcome.body,
          bodyTruncated: false,
        };
      }
      const loginUrl = found.url;
      return { kind: 'delivered', status: outcome.status, body: outcome.body, loginUrl };
    },
  };
}

/**
 * The login URL of an answer, read by its shape: a configured field first (BULKORDER_LOGIN_URL_FIELDS)
 * when it holds an absolute http(s) URL, else the one absolute http(s) URL anywhere in the body.
 * Two or more candidates and no configured field is refused rather than guessed.
 */
export function loginUrlIn(
  body: unknown,
  fields: readonly string[],
): { url: string } | { problem: 'LOGIN_URL_MISSING' | 'LOGIN_URL_INVALID' | 'LOGIN_URL_AMBIGUOUS'; message: string } {
  const named = findField(body, fields);
  if (named !== undefined && ABSOLUTE_URL.test(named)) return { url: named };
  const urls = [...new Set(findUrls(body))];
  if (urls.length === 1) return { url: urls[0] as string };
  const where = `(BULKORDER_LOGIN_URL_FIELDS: ${fields.join(', ')})`;
  if (urls.length > 1)
    return {
      problem: 'LOGIN_URL_AMBIGUOUS',
      message: `${urls.length} URLs in the answer and none in the configured fields ${where}`,
    };
  if (named !== undefined)
    return { problem: 'LOGIN_URL_INVALID', message: `the login URL field holds no absolute http(s) URL ${where}` };
  return { problem: 'LOGIN_URL_MISSING', message: `no login URL in the answer ${where}` };
}
