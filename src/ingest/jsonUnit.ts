import { INTEGER_FIELDS, ORDER_FIELD_TABLE, ORDER_FIELDS, PRODUCTS } from './orderFields.js';
import { API_KEYS, PRODUCT_FIELDS, objectAt } from './orderShape.js';
import { unitOf, type OrderUnit, type UnitRow } from './orderUnit.js';
import { jsonKind, syntaxMessage, type JsonOversize, type JsonRecord } from './readJsonRecords.js';
import type { JsonUnitContext } from './openRecordSource.js';
import { fieldForName, normalizeHeader } from './resolveColumns.js';
import { acceptRow } from './acceptRow.js';
import { validateRow, type RowRules, type RowText } from './validateRow.js';
import type { RowErrorCode } from '../errorCodes.js';
import type { RowError } from './types.js';
import { wholeRecordCell } from './csvCells.js';

/**
 * Turns one JSON element (or NDJSON line) into a unit. An element with `recipient` or
 * `products` is an order in the API's shape (several product lines; unknown fields refused,
 * since they would silently not reach the API); any other object is a flat row like a CSV row.
 * Cells are in ORDER_FIELDS order, so the rejects file of a JSON input is a CSV with the
 * default column names.
 */
export function jsonUnit(record: JsonRecord | JsonOversize, context: JsonUnitContext): OrderUnit {
  const { line } = record;
  if (record.kind === 'oversize') {
    return lone(line, 'RECORD_TOO_LARGE', 'this element is longer than the record-size cap; it was skipped unread.');
  }
  let value: unknown;
  try {
    value = JSON.parse(record.text);
  } catch (error) {
    // Its text goes to the rejects file (its first column), so what was written is not lost.
    return lone(line, 'JSON_SYNTAX', syntaxMessage(error), wholeRecordCell(record.text));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return lone(line, 'NOT_AN_ORDER', `expected an order object, found ${jsonKind(value)}.`);
  }
  const object = value as Record<string, unknown>;
  return 'recipient' in object || 'products' in object
    ? apiOrder(line, object, context)
    : flatRow(line, object, context);
}

function apiOrder(line: number, order: Record<string, unknown>, context: JsonUnitContext): OrderUnit {
  const errors: RowError[] = [];
  const unknown = (path: string): void => {
    errors.push({
      line,
      column: path,
      code: 'UNKNOWN_FIELD',
      message: `"${path}" is not part of the API's order shape; remove it (it would not reach the API).`,
    });
  };
  // Outer objects first (the order, recipient, recipient.address); product lines below.
  for (const [path, keys] of API_KEYS) {
    if (path === PRODUCTS) continue;
    for (const key of Object.keys(objectAt(order, path)))
      if (!keys.has(key)) unknown(path === '' ? key : `${path}.${key}`);
  }

  // The order's own fields; an optional one only when its key is there.
  const shared: Record<string, unknown> = {};
  for (const spec of ORDER_FIELD_TABLE) {
    if (PRODUCT_FIELDS.has(spec.name)) continue;
    const [parent, leaf] = splitPath(spec.path);
    const holder = objectAt(order, parent);
    if ('optional' in spec && !(leaf in holder)) continue;
    shared[spec.name] = holder[leaf];
  }

  const productKeys = API_KEYS.get(PRODUCTS) ?? new Set<string>();
  let products = Array.isArray(order[PRODUCTS]) ? (order[PRODUCTS] as unknown[]) : [];
  const noProducts = products.length === 0;
  if (noProducts) {
    errors.push({
      line,
      column: 'products',
      code: 'FIELD_REQUIRED',
      message: 'products must be a non-empty list of { "productId", "quantity" }.',
    });
    products = [{}];
  } else if (products.length > context.maxLinesPerOrder) {
    errors.push({
      line,
      column: 'products',
      code: 'ORDER_TOO_MANY_LINES',
      message: `this order has ${products.length} product lines; at most ${context.maxLinesPerOrder} are accepted.`,
    });
  }
  const rows = products.map((product) => {
    const item = objectAt(product, '');
    for (const key of Object.keys(item)) if (!productKeys.has(key)) unknown(`${PRODUCTS}.${key}`);
    const values: Record<string, unknown> = { ...shared };
    for (const spec of ORDER_FIELD_TABLE) {
      if (!PRODUCT_FIELDS.has(spec.name)) continue;
      const leaf = splitPath(spec.path)[1];
      if ('optional' in spec && !(leaf in item)) continue;
      values[spec.name] = item[leaf];
    }
    const row = checkedRow(line, values, true, context.rules);
    // With no product lines the row's empty productId/quantity say nothing new.
    if (noProducts) row.errors = row.errors.filter((e) => e.column === undefined || !PRODUCT_FIELDS.has(e.column));
    return row;
  });
  // One error per unknown path, however many product lines repeat it.
  const unique = errors.filter((e, i) => errors.findIndex((o) => o.code === e.code && o.column === e.column) === i);
  return unitOf(rows, true, unique);
}

function flatRow(line: number, object: Record<string, unknown>, context: JsonUnitContext): OrderUnit {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    const mapped = context.mapping.get(normalizeHeader(key));
    const field = mapped === undefined ? fieldForName(key) : mapped;
    if (field === undefined || field === null || field in fields) {
      if (mapped !== null) context.ignored.add(key);
      continue;
    }
    fields[field] = value;
  }
  return unitOf([checkedRow(line, fields, false, context.rules)], false, []);
}

/**
 * Converts JSON values to text (numbers as JSON wrote them) and checks the row. With
 * `apiTypes` (an order in the API's shape) the JSON types must be the API's: numbers for the
 * integer fields, strings for the rest; flat rows, like CSV cells, may carry either.
 */
function checkedRow(line: number, values: Record<string, unknown>, apiTypes: boolean, rules: RowRules = {}): UnitRow {
  const text: RowText = {};
  const typeErrors: RowError[] = [];
  // Text where a number belongs (or the reverse) is reported as a type error only when the
  // value is otherwise fine: "12a" for streetNumber deserves the more useful message.
  const softTypeErrors: RowError[] = [];
  for (const field of ORDER_FIELDS) {
    if (!(field in values)) continue;
    const value = values[field];
    if (value === undefined || value === null) text[field] = '';
    else if (typeof value === 'string' || typeof value === 'number') {
      text[field] = String(value);
      if (apiTypes && field !== 'orderRef' && (typeof value === 'number') !== INTEGER_FIELDS.has(field)) {
        const wanted = INTEGER_FIELDS.has(field) ? 'a JSON number' : 'a JSON string';
        softTypeErrors.push({
          line,
          column: field,
          code: 'FIELD_TYPE',
          message: `${field} must be ${wanted} in the API's order shape, not ${JSON.stringify(value)}.`,
        });
      }
    } else {
      text[field] = JSON.stringify(value);
      typeErrors.push({
        line,
        column: field,
        code: 'FIELD_TYPE',
        message: `${field} must be text or a number, not ${Array.isArray(value) ? 'a list' : typeof value}.`,
      });
    }
  }
  if (!('orderRef' in values)) delete text.orderRef;
  const checked = acceptRow(line, text) ?? validateRow(line, text, rules);
  const cells = ORDER_FIELDS.map((field) => text[field] ?? '');
  const failed = new Set(checked.errors.map((e) => e.column));
  typeErrors.push(...softTypeErrors.filter((e) => !failed.has(e.column)));
  if (typeErrors.length === 0) return { ...checked, cells };
  const typed = new Set(typeErrors.map((e) => e.column));
  const { value: _dropped, ...rest } = checked;
  return { ...rest, cells, errors: [...typeErrors, ...checked.errors.filter((e) => !typed.has(e.column))] };
}

/** `recipient.address.city` -> [`recipient.address`, `city`]. */
function splitPath(path: string): [parent: string, leaf: string] {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? ['', path] : [path.slice(0, dot), path.slice(dot + 1)];
}

function lone(line: number, code: RowErrorCode, message: string, text?: string): OrderUnit {
  const row: UnitRow = {
    line,
    cells: ORDER_FIELDS.map((_, i) => (i === 0 && text !== undefined ? text : '')),
    errors: [],
    notes: [],
    identity: { businessCustomerId: '' },
  };
  return unitOf([row], false, [{ line, code, message }]);
}
