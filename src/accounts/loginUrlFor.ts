import { setTimeout as sleep } from 'node:timers/promises';
import { BulkorderError, ExitCode, InfrastructureError, UsageError } from '../errors.js';
import { passedOn } from '../errorCodes.js';
import { emailProblem } from '../ingest/textChecks.js';
import { requireApi, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createApiTokenProvider } from '../delivery/apiTokenProvider.js';
import { createCafetariaplanClient, type LoginOutcome } from '../delivery/cafetariaplanClient.js';
import { createHttpTransport } from '../delivery/httpTransport.js';
import { decodeRemoteId, type RemoteId } from '../delivery/remoteId.js';
import type { CustomerDirectory } from './customerDirectory.js';
import { normalizeCompanyId } from '../ingest/validateAccountRow.js';

/**
 * Whom to log in: a customerId exactly as account creation returned it (a JSON string or
 * number, sent back with that type), or the employee's identity.
 */
export type LoginTarget = { customerId: RemoteId } | { email: string; companyId: string };

/** What loginUrlFor needs: the Cafetariaplan login call and the environment's customerId mapping. */
export interface LoginUrlDeps {
  /** CafetariaplanClient.login (src/delivery/cafetariaplanClient.ts). */
  login(customerId: RemoteId): Promise<LoginOutcome>;
  directory: CustomerDirectory;
}

/**
 * The one-time login URL for an employee, for an employer's portal that redirects its
 * employees (and for `bulkorder login`). With `{ email, companyId }` the customerId comes
 * from this environment's accounts ledger, so an id of the other environment is never used.
 * Each call asks the service for a new URL: a URL works once.
 *
 * Throws BulkorderError with a stable code: CUSTOMER_ID_UNKNOWN (no registered account for that
 * employee here, exit 4), the API's own code when it refuses (e.g. CUSTOMER_NOT_FOUND, exit 4),
 * UsageError for bad input or refused credentials (exit 2), InfrastructureError when the API or
 * token endpoint is unavailable (exit 5).
 */
export async function loginUrlFor(target: LoginTarget, deps: LoginUrlDeps): Promise<string> {
  const customerId =
    'customerId' in target ? checkedCustomerId(target.customerId) : await lookUp(target, deps.directory);
  return urlFrom(await loginOutcome(customerId, deps.login));
}

/**
 * `bulkorder login <customerId>`: one login call with a token of its own, no Redis (the service
 * refuses another environment's id). The text is read as the results file writes ids
 * (decodeRemoteId): digits are sent as a JSON number, `"100001"` (JSON-quoted) as a string,
 * anything else (a UUID) as a string. Digits the service refuses as a number (400 or 422) are
 * tried once more as a string: a person typing an id cannot know its JSON type.
 */
export async function loginUrlByCustomerId(config: Config, logger: Logger, customerId: string): Promise<string> {
  const settings = requireApi(config, 'cafetariaplan');
  const transport = createHttpTransport(settings.http);
  try {
    const client = createCafetariaplanClient(settings, {
      transport,
      logger,
      tokenProvider: createApiTokenProvider(settings, { transport, logger }),
    });
    const typed = checkedCustomerId(decodeRemoteId(customerId.trim()));
    const login = (id: RemoteId): Promise<LoginOutcome> => client.login(id);
    let outcome = await loginOutcome(typed, login);
    if (
      typeof typed === 'number' &&
      outcome.kind === 'permanent' &&
      (outcome.status === 400 || outcome.status === 422)
    ) {
      logger.info(
        { status: outcome.status, code: outcome.code },
        'customerId refused as a JSON number; trying it as a string',
      );
      outcome = await loginOutcome(String(typed), login);
    }
    return urlFrom(outcome);
  } finally {
    await transport.close();
  }
}

async function loginOutcome(customerId: RemoteId, login: LoginUrlDeps['login']): Promise<LoginOutcome> {
  // An employee is waiting on a redirect, and asking again has no lasting effect (an unused
  // one-time URL just expires), so a passing fault gets two more quick tries.
  let outcome = await login(customerId);
  for (let attempt = 1; attempt < LOGIN_ATTEMPTS && TRANSIENT.has(outcome.kind); attempt++) {
    const hinted = 'retryAfterMs' in outcome ? outcome.retryAfterMs : undefined;
    await sleep(Math.min(hinted ?? 250 * 2 ** (attempt - 1), 2_000));
    outcome = await login(customerId);
  }
  return outcome;
}

const LOGIN_ATTEMPTS = 3;
const TRANSIENT: ReadonlySet<LoginOutcome['kind']> = new Set(['retry', 'rateLimited', 'ambiguous']);

function checkedCustomerId(customerId: RemoteId): RemoteId {
  if (typeof customerId === 'number') {
    if (Number.isFinite(customerId)) return customerId;
    throw new UsageError(
      'CUSTOMER_ID_INVALID',
      `customerId must be the value account creation returned, not ${customerId}.`,
    );
  }
  const trimmed = customerId.trim();
  if (trimmed === '' || /\s/.test(trimmed))
    throw new UsageError(
      'CUSTOMER_ID_INVALID',
      `customerId must be the value account creation returned, not ${JSON.stringify(customerId)}.`,
    );
  return trimmed;
}

async function lookUp(target: { email: string; companyId: string }, directory: CustomerDirectory): Promise<RemoteId> {
  const companyId = normalizeCompanyId(target.companyId);
  if (companyId === undefined)
    throw new UsageError(
      'COMPANY_ID_INVALID',
      `companyId must be a UUID like 3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01, not ${JSON.stringify(target.companyId)}.`,
    );
  const email = target.email.trim();
  const problem = emailProblem(email);
  if (problem !== undefined) throw new UsageError('EMAIL_INVALID', `email ${problem.message}`);
  const found = await directory.find(companyId, email);
  if (found.found) return found.customerId;
  throw new BulkorderError(
    'CUSTOMER_ID_UNKNOWN',
    `no customerId for this employee of company ${companyId}: ${found.reason}`,
    { exitCode: ExitCode.needsAttention, details: { accountKey: found.key } },
  );
}

function urlFrom(outcome: LoginOutcome): string {
  switch (outcome.kind) {
    case 'delivered':
      return outcome.loginUrl;
    case 'unauthorized':
      throw new UsageError(passedOn(outcome.code), `cafetariaplan API refused our credentials: ${outcome.message}`);
    case 'permanent':
      throw new BulkorderError(
        passedOn(outcome.code),
        `cafetariaplan API refused the login request (HTTP ${outcome.status}): ${outcome.message}`,
        { exitCode: ExitCode.needsAttention },
      );
    default:
      throw new InfrastructureError(passedOn(outcome.code), `cafetariaplan API unavailable: ${outcome.message}`);
  }
}
