/**
 * THE description of an order's fields: one row of ORDER_FIELD_TABLE per flat field (one CSV
 * row is one product line of an order). Everything else about the order's shape is derived
 * from it: the field list and its order (cells of JSON inputs and rejects files), which fields
 * are required, the API path of each field (silent header aliases, the JSON order shape, the
 * payload builder), the header synonyms, personal data masking, the recipient fields rows of
 * one order must agree on, the spill codec, and the TypeScript types `NormalizedRow` and
 * `OrderPayload`. Adding an optional field is one row here plus its `rule` in validateRow.
 *
 * The simulator (src/simulator) keeps its own copy of the API's rules on purpose: it is a
 * cross-check, so it must not be derived from this table.
 */

import { defined } from '../errors.js';

/**
 * How a field's text is checked and normalised (see validateRow), which also fixes its type:
 * `integer` and `houseNumber` are numbers, the rest strings.
 */
export type FieldRule = 'reference' | 'integer' | 'houseNumber' | 'text' | 'country' | 'language' | 'email' | 'phone';

/** One field of a flat record and where it goes in the API's shape. */
export interface FieldSpec {
  /** Our field name, also the default column name. */
  readonly name: string;
  /** Dotted path in the API's order shape (spec, section 2); `products.x` is a field of each product line. */
  readonly path: string;
  readonly rule: FieldRule;
  /** The column may be left out (and the value is then absent); every other field needs a column. */
  readonly optional?: true;
  /** Identifies the order but is not sent (no place in the POST /orders body). */
  readonly payload?: false;
  /** Personal data: masked wherever a value is shown (messages, summaries, logs). */
  readonly personal?: true;
  /** Common English, Dutch and German header names (normalised), used only to suggest a --map. */
  readonly synonyms: readonly string[];
}

export const ORDER_FIELD_TABLE = [
  {
    name: 'orderRef',
    path: 'orderRef',
    rule: 'reference',
    optional: true,
    payload: false,
    synonyms: [
      'ordernumber',
      'orderno',
      'reference',
      'ref',
      'bestelnummer',
      'ordernummer',
      'referentie',
      'bestellnummer',
      'referenz',
    ],
  },
  {
    name: 'businessCustomerId',
    path: 'businessCustomerId',
    rule: 'integer',
    synonyms: ['customer', 'customerid', 'customernumber', 'klant', 'klantnummer', 'klantid', 'kundennummer', 'kunde'],
  },
  {
    name: 'firstName',
    path: 'recipient.address.firstName',
    rule: 'text',
    personal: true,
    synonyms: ['firstname', 'givenname', 'voornaam', 'vorname'],
  },
  {
    name: 'lastName',
    path: 'recipient.address.lastName',
    rule: 'text',
    personal: true,
    synonyms: ['surname', 'familyname', 'achternaam', 'nachname', 'familienname'],
  },
  {
    name: 'street',
    path: 'recipient.address.street',
    rule: 'text',
    personal: true,
    synonyms: ['straat', 'straatnaam', 'strasse', 'straße', 'address', 'adres', 'adresse'],
  },
  {
    name: 'streetNumber',
    path: 'recipient.address.streetNumber',
    rule: 'houseNumber',
    synonyms: ['housenumber', 'houseno', 'number', 'huisnummer', 'huisnr', 'nr', 'hausnummer'],
  },
  {
    name: 'postalCode',
    path: 'recipient.address.postalCode',
    rule: 'text',
    personal: true,
    synonyms: ['zip', 'zipcode', 'postcode', 'plz', 'postleitzahl'],
  },
  {
    name: 'city',
    path: 'recipient.address.city',
    rule: 'text',
    synonyms: ['town', 'plaats', 'woonplaats', 'stad', 'ort', 'stadt', 'gemeente'],
  },
  {
    name: 'countryCode',
    path: 'recipient.address.countryCode',
    rule: 'country',
    synonyms: ['country', 'land', 'landcode', 'landescode'],
  },
  {
    name: 'languageCode',
    path: 'recipient.languageCode',
    rule: 'language',
    synonyms: ['language', 'lang', 'taal', 'taalcode', 'sprache', 'locale'],
  },
  {
    name: 'email',
    path: 'recipient.email',
    rule: 'email',
    personal: true,
    synonyms: ['mail', 'emailaddress', 'emailadres', 'emailadresse'],
  },
  {
    name: 'telephoneNumber',
    path: 'recipient.telephoneNumber',
    rule: 'phone',
    personal: true,
    synonyms: [
      'phone',
      'phonenumber',
      'telephone',
      'mobile',
      'telefoon',
      'telefoonnummer',
      'mobiel',
      'telefon',
      'telefonnummer',
      'handy',
    ],
  },
  {
    name: 'productId',
    path: 'products.productId',
    rule: 'integer',
    synonyms: ['product', 'sku', 'article', 'artikel', 'artikelnummer', 'productnummer', 'item'],
  },
  {
    name: 'quantity',
    path: 'products.quantity',
    rule: 'integer',
    synonyms: ['qty', 'amount', 'count', 'aantal', 'anzahl', 'menge'],
  },
] as const satisfies readonly FieldSpec[];

type Spec = (typeof ORDER_FIELD_TABLE)[number];
type SpecOf<F extends OrderField> = Extract<Spec, { readonly name: F }>;
type ValueOfRule<R extends FieldRule> = R extends 'integer' | 'houseNumber' ? number : string;
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** A flat field name: `orderRef`, `businessCustomerId`, `firstName`, ... */
export type OrderField = Spec['name'];

/** The normalised value type of one field (number or string, from its rule). */
export type FieldValue<F extends OrderField> = ValueOfRule<SpecOf<F>['rule']>;

type OptionalField = Extract<Spec, { readonly optional: true }>['name'];

/** One product line, parsed and normalised (validateRow's output). */
export type NormalizedRow = Flat<
  { [F in Exclude<OrderField, OptionalField>]: FieldValue<F> } & { [F in OptionalField]?: FieldValue<F> }
>;

/** The segment of `path` that holds the product lines (an array in the API's shape). */
export const PRODUCTS = 'products';

type PayloadSpec = Exclude<Spec, { readonly payload: false }>;
type ProductSpec = Extract<PayloadSpec, { readonly path: `${typeof PRODUCTS}.${string}` }>;
type HeadSpec = Exclude<PayloadSpec, ProductSpec>;
type Nest<P extends string, V, Optional> = P extends `${infer Head}.${infer Rest}`
  ? { [K in Head]: Nest<Rest, V, Optional> }
  : Optional extends true
    ? { [K in P]?: V }
    : { [K in P]: V };
type Leaf<S extends Spec> = S['path'] extends `${typeof PRODUCTS}.${infer Rest}` ? Rest : S['path'];
type NestOf<S extends Spec> = S extends unknown
  ? Nest<Leaf<S>, ValueOfRule<S['rule']>, S extends { readonly optional: true } ? true : false>
  : never;
type Intersect<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type Merge<T> = T extends readonly (infer E)[] ? Merge<E>[] : T extends object ? { [K in keyof T]: Merge<T[K]> } : T;

/** One order exactly as the Business API's POST /orders takes it (spec, section 2), derived from the table. */
export type OrderPayload = Merge<Intersect<NestOf<HeadSpec>> & { [PRODUCTS]: Intersect<NestOf<ProductSpec>>[] }>;

const SPECS: ReadonlyMap<string, FieldSpec> = new Map(ORDER_FIELD_TABLE.map((spec) => [spec.name, spec]));

/** Every flat field, in table order (JSON inputs' cells and their rejects files use this order). */
export const ORDER_FIELDS: readonly OrderField[] = ORDER_FIELD_TABLE.map((spec) => spec.name);

/** Every field except the optional ones (orderRef) must have a column; without orderRef, one row is one order. */
export const REQUIRED_FIELDS: readonly OrderField[] = ORDER_FIELD_TABLE.filter((spec) => !('optional' in spec)).map(
  (spec) => spec.name,
);

/** A field that describes the recipient (its API path is under `recipient.`). */
export type RecipientField = Extract<Spec, { readonly path: `recipient.${string}` }>['name'];

/** Fields that describe the recipient: rows of one order must agree on all of them. */
export const RECIPIENT_FIELDS: readonly RecipientField[] = ORDER_FIELD_TABLE.flatMap((spec) =>
  isRecipient(spec) ? [spec.name] : [],
);

function isRecipient(spec: Spec): spec is Extract<Spec, { readonly path: `recipient.${string}` }> {
  return spec.path.startsWith('recipient.');
}

/** Where each field sits in the API's order shape (spec, section 2). */
export const API_PATHS: Readonly<Record<OrderField, string>> = fieldRecord((field) => specOf(field).path);

/** Header synonyms per field (normalised), only ever suggested. */
export const SYNONYMS: Readonly<Record<OrderField, readonly string[]>> = fieldRecord((field) => specOf(field).synonyms);

/** Fields whose value is a number (a JSON number in the API's shape). */
export const INTEGER_FIELDS: ReadonlySet<string> = new Set(
  ORDER_FIELD_TABLE.filter((spec) => isNumberRule(spec.rule)).map((spec) => spec.name),
);

function isNumberRule(rule: FieldRule): boolean {
  return rule === 'integer' || rule === 'houseNumber';
}

/**
 * Columns the rejects file adds. They are ignored when a fixed rejects file is imported again,
 * so their names are reserved.
 */
export const REJECT_COLUMNS = ['reject_line', 'reject_codes', 'reject_reasons'] as const;

/**
 * Every error column a file of ours may carry back into an import (rejects files and
 * dead-letter exports, which add `reject_status` and `reject_key`): never a field. `reject_key`, the
 * exported dead letter's order key, is read by the import only to link a fixed row to the dead letter
 * it replaces (src/ingest/replacedKey.ts); rejects and results files leave it out like the others.
 */
export const ERROR_COLUMNS = [...REJECT_COLUMNS, 'reject_status', 'reject_key'] as const;

/** Personal data: masked wherever a value is shown (messages, summaries, logs). */
export const PERSONAL_FIELDS: ReadonlySet<string> = new Set(
  ORDER_FIELD_TABLE.filter((spec) => 'personal' in spec).map((spec) => spec.name),
);

/** The table row of a field. */
function specOf(field: OrderField): FieldSpec {
  return defined(SPECS.get(field), `the table row of ${field}`);
}

/**
 * A record with one entry per field, built by `valueOf`. The one place a field-keyed object is
 * assembled from a loop: TypeScript cannot see that the loop covers every key, the table can.
 */
function fieldRecord<T>(valueOf: (field: OrderField) => T): Record<OrderField, T> {
  const out: Partial<Record<OrderField, T>> = {};
  for (const field of ORDER_FIELDS) out[field] = valueOf(field);
  return out as Record<OrderField, T>;
}

/** The recipient fields' entries of a record built by `valueOf` (see fieldRecord). */
export function recipientRecord<T>(valueOf: (field: RecipientField) => T): Record<RecipientField, T> {
  const out: Partial<Record<RecipientField, T>> = {};
  for (const field of RECIPIENT_FIELDS) out[field] = valueOf(field);
  return out as Record<RecipientField, T>;
}

/**
 * Checked values as a NormalizedRow. Callers (validateRow, the spill codec) put a value of its
 * rule's type under every required field; the table walk in test/ingest/orderFields.test.ts
 * holds them to it.
 */
export function normalizedRow(values: Partial<Record<OrderField, string | number>>): NormalizedRow {
  return values as NormalizedRow;
}
