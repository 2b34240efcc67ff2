import { describe, expect, it } from 'vitest';
import { canonicalRows } from '../../src/kinds/originalRows.js';
import { jsonUnit } from '../../src/ingest/jsonUnit.js';
import { maskValue } from '../../src/ingest/maskValue.js';
import { ORDER_COLUMNS } from '../../src/ingest/orderColumns.js';
import {
  ORDER_FIELD_TABLE,
  ORDER_FIELDS,
  PERSONAL_FIELDS,
  RECIPIENT_FIELDS,
  REQUIRED_FIELDS,
  type FieldRule,
  type OrderField,
} from '../../src/ingest/orderFields.js';
import { payloadHash } from '../../src/ingest/orderKey.js';
import { buildPayload, valueAt } from '../../src/ingest/orderShape.js';
import { csvUnit, unitOf, type OrderUnit } from '../../src/ingest/orderUnit.js';
import { fieldForName, normalizeHeader, resolveColumns } from '../../src/ingest/resolveColumns.js';
import { decodeUnit, encodeUnit, orderUnitCodec } from '../../src/ingest/unitCodec.js';
import { validateRow, type RowText } from '../../src/ingest/validateRow.js';

/**
 * Walks ORDER_FIELD_TABLE, so a field added to the table alone is held to everything the
 * table drives: header matching, validation, the spill codec, the payload and the JSON order
 * shape, the canonical rows of dead letters, the order key.
 */

/** A valid value (already normalised) per rule; a new rule needs one here. */
const SAMPLE: Record<FieldRule, { text: string; value: string | number; other: string | number }> = {
  reference: { text: 'R-1', value: 'R-1', other: 'R-2' },
  integer: { text: '7', value: 7, other: 8 },
  houseNumber: { text: '12', value: 12, other: 13 },
  text: { text: 'Keizersgracht', value: 'Keizersgracht', other: 'Prinsengracht' },
  country: { text: 'NL', value: 'NL', other: 'BE' },
  language: { text: 'nl', value: 'nl', other: 'fr' },
  email: { text: 'jan@example.nl', value: 'jan@example.nl', other: 'piet@example.nl' },
  phone: { text: '+31612345678', value: '+31612345678', other: '+31612345679' },
};

const fullText: RowText = Object.fromEntries(ORDER_FIELD_TABLE.map((spec) => [spec.name, SAMPLE[spec.rule].text]));
const expected = Object.fromEntries(ORDER_FIELD_TABLE.map((spec) => [spec.name, SAMPLE[spec.rule].value]));
const sent = ORDER_FIELD_TABLE.filter((spec) => !('payload' in spec));

function validValue(text: RowText = fullText) {
  const checked = validateRow(2, text);
  expect(checked.errors).toEqual([]);
  return checked.value!;
}

describe('the order field table', () => {
  it('gives every field a unique name, an API path and header synonyms that match no other field', () => {
    expect(new Set(ORDER_FIELDS.map(normalizeHeader)).size).toBe(ORDER_FIELDS.length);
    for (const spec of ORDER_FIELD_TABLE) {
      expect(spec.synonyms.length, spec.name).toBeGreaterThan(0);
      expect(fieldForName(spec.name), spec.name).toBe(spec.name);
      expect(fieldForName(spec.path), spec.path).toBe(spec.name);
      expect(ORDER_COLUMNS.synonyms[spec.name]).toEqual(spec.synonyms);
      for (const synonym of spec.synonyms) {
        expect(synonym, `${spec.name}: synonyms are normalised`).toBe(normalizeHeader(synonym));
        const owner = fieldForName(synonym);
        expect(owner === undefined || owner === spec.name, `${spec.name}: synonym ${synonym} is ${owner}`).toBe(true);
      }
    }
  });

  it('requires a column for every field except the optional ones', () => {
    expect(REQUIRED_FIELDS).toEqual(ORDER_FIELD_TABLE.filter((spec) => !('optional' in spec)).map((spec) => spec.name));
    expect(ORDER_COLUMNS.required).toEqual(REQUIRED_FIELDS);
  });

  it('validates every field and reports a missing required one by name', () => {
    expect(validValue()).toEqual(expected);
    for (const field of REQUIRED_FIELDS) {
      const columns = validateRow(2, { ...fullText, [field]: '' }).errors.map((e) => e.column);
      expect(columns, field).toContain(field);
    }
  });

  it('lets the recipient fields be the ones under recipient. and masks personal data', () => {
    expect(RECIPIENT_FIELDS).toEqual(
      ORDER_FIELD_TABLE.filter((spec) => spec.path.startsWith('recipient.')).map((spec) => spec.name),
    );
    for (const field of PERSONAL_FIELDS) expect(maskValue(field, 'Keizersgracht'), field).not.toBe('Keizersgracht');
  });

  it('round-trips every field through the spill codec', () => {
    const value = validValue();
    const unit = unitOf(
      [{ ...validateRow(2, fullText), cells: ORDER_FIELDS.map((field) => fullText[field] ?? '') }],
      false,
      [],
    );
    const decoded = decodeUnit(encodeUnit(unit));
    expect(decoded).toEqual(unit);
    expect(decoded.rows[0]?.value).toEqual(value);
    const { orderRef: _absent, ...withoutRef } = fullText;
    const solo = unitOf([{ ...validateRow(3, withoutRef), cells: [] }], false, []);
    expect(decodeUnit(encodeUnit(solo))).toEqual(solo);
  });

  it('spills a row whose values are its cells as written in the short form, and any other row whole', () => {
    for (const fields of [ORDER_FIELDS, ORDER_FIELDS.filter((field) => field !== 'orderRef')]) {
      // Columns in another order than the table's, and one that maps to no field.
      const header = ['remark', ...[...fields].reverse()];
      const plan = resolveColumns('plain.csv', header);
      const codec = orderUnitCodec(plan.fieldIndex);
      const unit = (line: number, text: RowText): OrderUnit =>
        csvUnit({ kind: 'record', line, values: header.map((name) => text[name as OrderField] ?? 'x') }, plan);
      const plain = unit(2, fullText);
      expect(plain.rows[0]!.value).toEqual(
        validValue(Object.fromEntries(fields.map((field) => [field, fullText[field]]))),
      );
      const quiet = structuredClone(plain); // a value that is not its cell, without a note
      const moved = { streetNumber: 13, street: 'Prinsengracht' };
      quiet.rows[0]!.value = { ...quiet.rows[0]!.value!, ...moved };
      if (quiet.rows[0]!.recipient !== undefined)
        quiet.rows[0]!.recipient = { ...quiet.rows[0]!.recipient, ...moved, streetNumber: '13' };
      const others = [
        quiet,
        unit(3, { ...fullText, street: ' Keizersgracht ' }), // valid, trimmed, noted
        unit(4, { ...fullText, quantity: '0' }), // rejected
      ];
      for (const each of [plain, ...others])
        expect(codec.decode(codec.encode(each), each.group), each.group).toEqual(each);
      expect(codec.encode(plain).length).toBeLessThan(encodeUnit(plain).length * 0.75);
      for (const each of others) expect(codec.encode(each)).toBe(encodeUnit(each));
    }
  });

  it('puts every sent field at its API path in the payload, and nothing else', () => {
    const payload = buildPayload([validValue()]);
    for (const spec of sent) {
      const [head, ...rest] = spec.path.split('.');
      const at = head === 'products' ? valueAt(payload.products[0], rest.join('.')) : valueAt(payload, spec.path);
      expect(at, spec.path).toBe(expected[spec.name]);
    }
    const leaves = (value: unknown): number =>
      Array.isArray(value)
        ? value.reduce((n: number, v) => n + leaves(v), 0)
        : typeof value === 'object' && value !== null
          ? Object.values(value).reduce((n: number, v) => n + leaves(v), 0)
          : 1;
    expect(leaves(payload)).toBe(sent.length);
  });

  it('reads every field back from a JSON order in the API shape and from a payload (dead-letter rows)', () => {
    const value = validValue();
    const payload = buildPayload([value]);
    const unit = jsonUnit(
      { kind: 'element', line: 2, text: JSON.stringify({ orderRef: expected.orderRef, ...payload }) },
      { mapping: new Map(), ignored: new Set(), maxLinesPerOrder: 10 },
    );
    expect(unit.errors).toEqual([]);
    expect(unit.rows[0]?.value).toEqual(value);
    expect(canonicalRows(payload, String(expected.orderRef))).toEqual([ORDER_FIELDS.map((field) => fullText[field])]);
  });

  it('gives another order key when any sent field differs', () => {
    const hash = payloadHash(buildPayload([validValue()]));
    for (const spec of sent) {
      const other = validValue({ ...fullText, [spec.name]: String(SAMPLE[spec.rule].other) });
      expect(payloadHash(buildPayload([other])), spec.name).not.toBe(hash);
    }
  });

  it('names each field once', () => {
    const names: OrderField[] = ORDER_FIELD_TABLE.map((spec) => spec.name);
    expect(names).toEqual(ORDER_FIELDS);
  });
});
