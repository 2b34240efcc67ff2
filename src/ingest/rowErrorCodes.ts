/**
 * Every code a RowError can carry, with the short description the summary and README use.
 * Code branches on these codes, never on messages.
 */
export const ROW_ERROR_CODES = {
  FIELD_REQUIRED: 'a required value is empty',
  FIELD_TYPE: 'a JSON value has the wrong type (e.g. an object where text belongs)',
  CONTROL_CHARACTER: 'text holds a tab or other control character (line breaks are joined, not refused)',
  FORMULA_TEXT: 'text is a spreadsheet formula (=HYPERLINK(...)), never a real name or address',
  REPLACEMENT_CHARACTER: 'text holds "\uFFFD": it was damaged by a wrong encoding before it reached us',
  INTEGER_INVALID: 'not a whole number written in plain digits',
  INTEGER_NOT_POSITIVE: 'a number that must be 1 or more',
  INTEGER_TOO_LARGE: 'a number too large to send safely in JSON',
  STREET_NUMBER_ADDITION: 'a house number with an addition (12a); the API takes an integer',
  COUNTRY_CODE_INVALID: 'not an ISO 3166-1 two-letter country code',
  LANGUAGE_CODE_INVALID: 'not an ISO 639-1 two-letter language code',
  EMAIL_INVALID: 'not a valid e-mail address',
  PHONE_NOT_INTERNATIONAL: 'a phone number without + and country code',
  PHONE_INVALID: 'a phone number impossible for its country (wrong length or prefix)',
  PHONE_UNVERIFIED: 'a phone number possible for its country but not known to be in use (refused with --strict-phone)',
  ORDER_REF_MISSING: 'orderRef is empty in a file that groups rows by orderRef',
  RECIPIENT_MISMATCH: 'rows of one order disagree on the recipient',
  DUPLICATE_PRODUCT: 'one order lists the same product twice',
  DUPLICATE_ORDER_REF: 'two complete JSON orders use the same orderRef',
  ORDER_REF_REUSED:
    'the orderRef was used before for an order with other content (delivered, held or in flight): not sent',
  ORDER_TOO_MANY_LINES: 'an order has more product lines than allowed',
  IDENTICAL_ORDERS_TOO_MANY:
    'one order without orderRef is repeated over more lines than one order may have (a pasted row?)',
  ORDER_NOT_SENT: 'this row is fine, but another row of its order is not',
  UNKNOWN_FIELD: 'a JSON order has a field the API order shape does not have',
  CSV_FIELD_COUNT: 'a CSV row has more or fewer cells than the header',
  CSV_QUOTE: 'a CSV row has a misplaced double quote',
  JSON_SYNTAX: 'an element or line is not valid JSON',
  NOT_AN_ORDER: 'a JSON element is not an object',
  RECORD_TOO_LARGE: 'an element or line is longer than the record-size cap',
  COMPANY_ID_INVALID: 'a companyId that is not a UUID',
  DUPLICATE_ACCOUNT: 'an employee (companyId + email) is on more than one row of the file',
  NOT_AN_ACCOUNT: 'a JSON element is not an account object',
} as const;

export type RowErrorCode = keyof typeof ROW_ERROR_CODES;
