/**
 * The Cafetariaplan API: create an employee account, then ask for a one-time login URL.
 * Names of the answers' fields are "not shown" in the spec; they come from
 * Config.responseFields (customerId, loginUrl) and are checked here.
 */
import type { ApiSettings } from '../config.js';
import { authorizedPost, type ApiClientDeps, type PostOptions } from './authorizedPost.js';
import type { Outcome } from './classifyOutcome.js';
import { findField } from './findField.js';

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

/** Delivered carries the new account's `customerId`, always as a string (its type is "not shown"). */
export type AccountOutcome = Undelivered | { kind: 'delivered'; status: number; body: unknown; customerId: string };

/** Delivered carries the one-time `loginUrl`. */
export type LoginOutcome = Undelivered | { kind: 'delivered'; status: number; body: unknown; loginUrl: string };

export interface CafetariaplanClient {
  /** Registers an employee. 409 (account exists) is `permanent` with the API's code. */
  createAccount(account: AccountRequest, options?: PostOptions): Promise<AccountOutcome>;
  /** Asks for a one-time login URL for `customerId` (sent as a string). */
  login(customerId: string, options?: PostOptions): Promise<LoginOutcome>;
}

/** A client for the Cafetariaplan API; `settings` from `requireApi(config, 'cafetariaplan')`. */
export function createCafetariaplanClient(settings: ApiSettings, deps: ApiClientDeps): CafetariaplanClient {
  if (settings.api !== 'cafetariaplan') throw new Error(`createCafetariaplanClient needs cafetariaplan settings, got ${settings.api}`);
  const fields = settings.responseFields;
  return {
    async createAccount(account, options) {
      const outcome = await authorizedPost(settings, deps, '/accounts', account, options);
      if (outcome.kind !== 'delivered') return outcome;
      const customerId = findField(outcome.body, fields.customerId);
      if (customerId === undefined) {
        // The account exists now but we cannot name it; posting again would only meet a 409.
        deps.logger.warn({ api: settings.api, status: outcome.status, body: outcome.body }, 'account created but no customerId found in the answer');
        return { kind: 'ambiguous', status: outcome.status, code: 'CUSTOMER_ID_MISSING', message: `HTTP ${outcome.status} without any of the fields ${fields.customerId.join(', ')} (BULKORDER_CUSTOMER_ID_FIELDS)` };
      }
      return { kind: 'delivered', status: outcome.status, body: outcome.body, customerId };
    },
    async login(customerId, options) {
      const outcome = await authorizedPost(settings, deps, '/login', { customerId }, options);
      if (outcome.kind !== 'delivered') return outcome;
      const loginUrl = findField(outcome.body, fields.loginUrl);
      if (loginUrl === undefined || !/^https?:\/\/\S+$/.test(loginUrl)) {
        const code = loginUrl === undefined ? 'LOGIN_URL_MISSING' : 'LOGIN_URL_INVALID';
        return { kind: 'permanent', status: outcome.status, code, message: `HTTP ${outcome.status} without a login URL in ${fields.loginUrl.join(', ')} (BULKORDER_LOGIN_URL_FIELDS)`, body: outcome.body, bodyTruncated: false };
      }
      return { kind: 'delivered', status: outcome.status, body: outcome.body, loginUrl };
    },
  };
}
