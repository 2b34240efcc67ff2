/** Words for one record kind in the reasons a person reads (dead letters, held records, logs). */
export interface RecordWording {
  /** `order` or `account`. */
  noun: string;
  /**
   * The reason for a refusal this kind explains better than the generic "the API refused the
   * order" (accounts: 409 means the account exists); undefined for the generic text.
   */
  refusal?(outcome: { status: number; code: string; message: string }): string | undefined;
  /** What a person does with a record held because an earlier attempt may have sent it. */
  heldHint: string;
}

/** Orders: the default wording. */
export const ORDER_WORDING: RecordWording = {
  noun: 'order',
  heldHint: 'Check for the order on the service, then `bulkorder review release` or `review resolve --delivered`.',
};
