/**
 * The flat row fields: one row is one product line of an order. Names are the default
 * CSV column names; the API's dotted paths are accepted as aliases (see resolveColumns).
 */

export const ORDER_FIELDS = [
  'orderRef',
  'businessCustomerId',
  'firstName',
  'lastName',
  'street',
  'streetNumber',
  'postalCode',
  'city',
  'countryCode',
  'languageCode',
  'email',
  'telephoneNumber',
  'productId',
  'quantity',
] as const;

export type OrderField = (typeof ORDER_FIELDS)[number];

/** Every field except orderRef must have a column; without orderRef, one row is one order. */
export const REQUIRED_FIELDS: readonly OrderField[] = ORDER_FIELDS.filter((field) => field !== 'orderRef');

/** Fields that describe the recipient: rows of one order must agree on all of them. */
export const RECIPIENT_FIELDS = [
  'firstName',
  'lastName',
  'street',
  'streetNumber',
  'postalCode',
  'city',
  'countryCode',
  'languageCode',
  'email',
  'telephoneNumber',
] as const satisfies readonly OrderField[];

/** Where each field sits in the API's order shape (spec, section 2). */
export const API_PATHS: Readonly<Record<OrderField, string>> = {
  orderRef: 'orderRef',
  businessCustomerId: 'businessCustomerId',
  firstName: 'recipient.address.firstName',
  lastName: 'recipient.address.lastName',
  street: 'recipient.address.street',
  streetNumber: 'recipient.address.streetNumber',
  postalCode: 'recipient.address.postalCode',
  city: 'recipient.address.city',
  countryCode: 'recipient.address.countryCode',
  languageCode: 'recipient.languageCode',
  email: 'recipient.email',
  telephoneNumber: 'recipient.telephoneNumber',
  productId: 'products.productId',
  quantity: 'products.quantity',
};

/**
 * Columns the rejects file adds. They are ignored when a fixed rejects file is imported again,
 * so their names are reserved.
 */
export const REJECT_COLUMNS = ['reject_line', 'reject_codes', 'reject_reasons'] as const;

/**
 * Every error column a file of ours may carry back into an import (rejects files and
 * dead-letter exports, which add `reject_status`): ignored silently on import.
 */
export const ERROR_COLUMNS = [...REJECT_COLUMNS, 'reject_status'] as const;

/** Personal data: masked wherever a value is shown (messages, summaries, logs). */
export const PERSONAL_FIELDS: ReadonlySet<string> = new Set<OrderField>([
  'firstName',
  'lastName',
  'street',
  'postalCode',
  'email',
  'telephoneNumber',
]);
