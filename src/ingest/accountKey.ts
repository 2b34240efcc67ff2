import { createHash } from 'node:crypto';

/**
 * The key of an employee account: `acct.<companyId>.<sha256(email in lower case), 32 hex>`.
 * The service knows an account by (companyId, email) and refuses a second one (409), so the
 * key is exactly that identity: the same on every import, safe as a BullMQ job id (no `:`),
 * and without the address itself in Redis key names. E-mail case is ignored, as the service
 * does; companyId is already lower case after validation.
 */
export function accountKey(companyId: string, email: string): string {
  const hash = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32);
  return `acct.${companyId.trim().toLowerCase()}.${hash}`;
}
