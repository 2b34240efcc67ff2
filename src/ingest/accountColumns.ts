import type { ColumnSchema } from './columnSchema.js';

/**
 * THE description of an employee file's fields: exactly the Cafetariaplan API's account (spec,
 * section 2), one row per employee, every field a required string. The field list, the
 * `AccountPayload` type and the header synonyms are derived from it. Ingest-level and pure:
 * src/delivery's AccountRequest has the same shape.
 */
export const ACCOUNT_FIELD_TABLE = [
  { name: 'email', synonyms: ['mail', 'emailaddress', 'emailadres', 'emailadresse', 'workemail'] },
  { name: 'firstName', synonyms: ['givenname', 'voornaam', 'vorname', 'first'] },
  { name: 'lastName', synonyms: ['surname', 'familyname', 'achternaam', 'nachname', 'familienname', 'last'] },
  /** Two-letter lowercase ISO 639-1 code. An order file's `languageCode` header means the same: accepted silently. */
  {
    name: 'isoLanguageCode',
    synonyms: ['language', 'lang', 'taal', 'taalcode', 'sprache', 'locale'],
    aliases: ['languageCode'],
  },
  /** The employer's company id, a UUID (lower case). */
  {
    name: 'companyId',
    synonyms: [
      'company',
      'companyuuid',
      'employer',
      'employerid',
      'bedrijf',
      'bedrijfsid',
      'werkgever',
      'firma',
      'firmenid',
    ],
  },
] as const satisfies readonly { name: string; synonyms: readonly string[]; aliases?: readonly string[] }[];

export type AccountField = (typeof ACCOUNT_FIELD_TABLE)[number]['name'];

/** Every account field, in table order (JSON inputs' cells and their rejects files use this order). */
export const ACCOUNT_FIELDS: readonly AccountField[] = ACCOUNT_FIELD_TABLE.map((spec) => spec.name);

/** One account as POST {base_url}/cafetariaplan-api/accounts takes it (see ACCOUNT_FIELD_TABLE for each field). */
export type AccountPayload = { [F in AccountField]: string };

/** The columns of an employee file; every field is required. */
export const ACCOUNT_COLUMNS: ColumnSchema = {
  noun: 'account',
  fields: ACCOUNT_FIELDS,
  required: ACCOUNT_FIELDS,
  aliases: Object.fromEntries(
    ACCOUNT_FIELD_TABLE.flatMap((spec) => ('aliases' in spec ? [[spec.name, spec.aliases]] : [])),
  ),
  synonyms: Object.fromEntries(ACCOUNT_FIELD_TABLE.map((spec) => [spec.name, spec.synonyms])),
};
