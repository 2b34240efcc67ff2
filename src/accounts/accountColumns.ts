import type { ColumnSchema } from '../ingest/columnSchema.js';

/**
 * The employee file's fields: exactly the Cafetariaplan API's account (spec, section 2), one
 * row per employee. Ingest-level and pure: src/delivery's AccountRequest has the same shape.
 */
export const ACCOUNT_FIELDS = ['email', 'firstName', 'lastName', 'isoLanguageCode', 'companyId'] as const;

export type AccountField = (typeof ACCOUNT_FIELDS)[number];

/** One account as POST {base_url}/cafetariaplan-api/accounts takes it. */
export interface AccountPayload {
  email: string;
  firstName: string;
  lastName: string;
  /** Two-letter lowercase ISO 639-1 code. */
  isoLanguageCode: string;
  /** The employer's company id, a UUID (lower case). */
  companyId: string;
}

/** The columns of an employee file; every field is required. */
export const ACCOUNT_COLUMNS: ColumnSchema = {
  noun: 'account',
  fields: ACCOUNT_FIELDS,
  required: ACCOUNT_FIELDS,
  // An order file's `languageCode` header means the same thing; accepting it silently is safe.
  aliases: { isoLanguageCode: ['languageCode'] },
  synonyms: {
    email: ['mail', 'emailaddress', 'emailadres', 'emailadresse', 'workemail'],
    firstName: ['givenname', 'voornaam', 'vorname', 'first'],
    lastName: ['surname', 'familyname', 'achternaam', 'nachname', 'familienname', 'last'],
    isoLanguageCode: ['language', 'lang', 'taal', 'taalcode', 'sprache', 'locale'],
    companyId: ['company', 'companyuuid', 'employer', 'employerid', 'bedrijf', 'bedrijfsid', 'werkgever', 'firma', 'firmenid'],
  },
};
