import type { ColumnSchema } from './columnSchema.js';
import { API_PATHS, ORDER_FIELDS, REQUIRED_FIELDS, SYNONYMS } from './orderFields.js';

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
