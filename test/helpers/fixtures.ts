// The one recipient the tests' orders go to, in the API's shape and flat (a row's columns).
// Each test that needs a different value spreads over these rather than copying the literal.

/** Jan de Vries in Amsterdam, as the API's `recipient`. */
export const JAN_RECIPIENT = {
  address: {
    firstName: 'Jan',
    lastName: 'de Vries',
    street: 'Keizersgracht',
    streetNumber: 112,
    postalCode: '1015 CX',
    city: 'Amsterdam',
    countryCode: 'NL',
  },
  languageCode: 'nl',
  email: 'jan.devries@example.nl',
  telephoneNumber: '+31612345678',
} as const;

/** The same recipient as a flat row's columns (CSV, NDJSON of rows). */
export const JAN_FLAT = {
  ...JAN_RECIPIENT.address,
  languageCode: JAN_RECIPIENT.languageCode,
  email: JAN_RECIPIENT.email,
  telephoneNumber: JAN_RECIPIENT.telephoneNumber,
} as const;

/** A fresh deep copy of JAN_RECIPIENT, for a test that edits its order in place. */
export function janRecipient(): { address: Record<string, unknown> } & Record<string, unknown> {
  return { ...JAN_RECIPIENT, address: { ...JAN_RECIPIENT.address } };
}
