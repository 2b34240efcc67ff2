/**
 * EXTENSION POINT: the Cafetariaplan API's draft-orders check.
 *
 * The spec (section 4) says an operation to check draft orders exists and takes the
 * customerId, but its method, path, request and response are "not shown", so nothing here
 * guesses them. When the operator documents it:
 *   1. add `draftOrders(customerId)` to src/delivery/cafetariaplanClient.ts through
 *      authorizedPost (or a GET beside it), with the answer's field names in Config.responseFields;
 *   2. replace `undocumentedDraftOrders` below with a DraftOrdersCheck that calls it and maps
 *      the Outcome as loginUrlFor does (refusal: exit 4, unavailable: exit 5);
 *   3. pass it to openLoginPortal's callers (a portal) or a `bulkorder drafts` command.
 * The customerId comes from the same place as login's (CustomerDirectory), so the check can
 * never use an id of the other environment.
 */
import { BulkorderError, ExitCode } from '../errors.js';

/** What a draft-orders check answers; its fields are unknown until the operation is documented. */
export interface DraftOrdersAnswer {
  customerId: string;
  /** The service's answer as it came (JSON), kept whole because its shape is not known. */
  body: unknown;
}

/** Checks the draft orders of one employee account. */
export type DraftOrdersCheck = (customerId: string) => Promise<DraftOrdersAnswer>;

/** The check until the operation is documented: refuses with a stable code, sends nothing. */
export const undocumentedDraftOrders: DraftOrdersCheck = async () => {
  throw new BulkorderError(
    'DRAFT_ORDERS_UNDOCUMENTED',
    'the draft-orders check of the Cafetariaplan API is not documented (method, path and answer are "not shown" in the spec); see src/accounts/draftOrders.ts for how to add it.',
    { exitCode: ExitCode.usage },
  );
};
