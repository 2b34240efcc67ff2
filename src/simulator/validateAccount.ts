/**
 * The Cafetariaplan API's request rules: account creation and login, with the same field
 * checks as orders (no unknown fields, every problem listed).
 */
import { apiError, type Answer, type Problem } from './answer.js';
import { checkEmail, checkLanguageCode, checkObject, checkText, checkUuid } from './fieldChecks.js';

const ACCOUNT_FIELDS = ['email', 'firstName', 'lastName', 'isoLanguageCode', 'companyId'] as const;
const LOGIN_FIELDS = ['customerId'] as const;

/** Returns the 400 answer for an invalid account body, or undefined when it is acceptable. */
export function validateAccount(body: unknown): Answer | undefined {
  const problems: Problem[] = [];
  const account = checkObject(body, '', ACCOUNT_FIELDS, problems);
  if (account !== undefined) {
    checkEmail(account.email, 'email', problems);
    checkText(account.firstName, 'firstName', problems);
    checkText(account.lastName, 'lastName', problems);
    checkLanguageCode(account.isoLanguageCode, 'isoLanguageCode', problems);
    checkUuid(account.companyId, 'companyId', problems);
  }
  return invalidIfAny(problems, 'account');
}

/**
 * Returns the 400 answer for an invalid login body, or undefined when it is acceptable. The
 * customerId must have the JSON type the API hands out (`ids`): a UUID string or an integer.
 */
export function validateLogin(body: unknown, ids: 'string' | 'integer' | 'digits' = 'string'): Answer | undefined {
  const problems: Problem[] = [];
  const login = checkObject(body, '', LOGIN_FIELDS, problems);
  if (login !== undefined) {
    const id = login.customerId;
    if (ids === 'string') checkUuid(id, 'customerId', problems);
    else if (ids === 'integer' && !Number.isSafeInteger(id))
      problems.push({ path: 'customerId', problem: 'must be an integer (a JSON number, not a string)' });
    else if (ids === 'digits' && (typeof id !== 'string' || !/^\d+$/.test(id)))
      problems.push({ path: 'customerId', problem: 'must be a string of digits (not a JSON number)' });
  }
  return invalidIfAny(problems, 'login request');
}

function invalidIfAny(problems: Problem[], what: string): Answer | undefined {
  if (problems.length === 0) return undefined;
  return apiError(
    400,
    'VALIDATION_FAILED',
    `The ${what} is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}).`,
    { details: problems },
  );
}
