import { describe, expect, it } from 'vitest';
import { undocumentedDraftOrders } from '../../src/accounts/draftOrders.js';

describe('the draft-orders extension point', () => {
  it('refuses with a stable code until the operation is documented, and sends nothing', async () => {
    await expect(undocumentedDraftOrders('9d1f7c1e-0000-4000-8000-000000000000')).rejects.toMatchObject({
      code: 'DRAFT_ORDERS_UNDOCUMENTED',
      exitCode: 2,
    });
  });
});
