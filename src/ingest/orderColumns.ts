import type { ColumnSchema } from './columnSchema.js';
import { API_PATHS, ORDER_FIELDS, REQUIRED_FIELDS } from './orderFields.js';

/** Common English, Dutch and German header names, used only to suggest a --map (never to match silently). */
const SYNONYMS = {
  orderRef: ['ordernumber', 'orderno', 'reference', 'ref', 'bestelnummer', 'ordernummer', 'referentie', 'bestellnummer', 'referenz'],
  businessCustomerId: ['customer', 'customerid', 'customernumber', 'klant', 'klantnummer', 'klantid', 'kundennummer', 'kunde'],
  firstName: ['firstname', 'givenname', 'voornaam', 'vorname'],
  lastName: ['surname', 'familyname', 'achternaam', 'nachname', 'familienname'],
  street: ['straat', 'straatnaam', 'strasse', 'straße', 'address', 'adres', 'adresse'],
  streetNumber: ['housenumber', 'houseno', 'number', 'huisnummer', 'huisnr', 'nr', 'hausnummer'],
  postalCode: ['zip', 'zipcode', 'postcode', 'plz', 'postleitzahl'],
  city: ['town', 'plaats', 'woonplaats', 'stad', 'ort', 'stadt', 'gemeente'],
  countryCode: ['country', 'land', 'landcode', 'landescode'],
  languageCode: ['language', 'lang', 'taal', 'taalcode', 'sprache', 'locale'],
  email: ['mail', 'emailaddress', 'emailadres', 'emailadresse'],
  telephoneNumber: ['phone', 'phonenumber', 'telephone', 'mobile', 'telefoon', 'telefoonnummer', 'mobiel', 'telefon', 'telefonnummer', 'handy'],
  productId: ['product', 'sku', 'article', 'artikel', 'artikelnummer', 'productnummer', 'item'],
  quantity: ['qty', 'amount', 'count', 'aantal', 'anzahl', 'menge'],
} satisfies Record<(typeof ORDER_FIELDS)[number], readonly string[]>;

/** The columns of an order file: one row is one product line (see orderFields.ts). */
export const ORDER_COLUMNS: ColumnSchema = {
  noun: 'order',
  fields: ORDER_FIELDS,
  required: REQUIRED_FIELDS,
  aliases: Object.fromEntries(ORDER_FIELDS.map((field) => [field, [API_PATHS[field]]])),
  synonyms: SYNONYMS,
  warnings(fieldIndex, lookalike) {
    if (fieldIndex.orderRef !== undefined) return [];
    const similar = lookalike('orderRef');
    return [
      similar === undefined
        ? 'no orderRef column: every row is an order of its own.'
        : `column "${similar}" looks like an order reference but is not used, so every row is an order of its own. ` +
          `If rows with the same value belong to one order, map it: --map with {"${similar}": "orderRef"}.`,
    ];
  },
};
