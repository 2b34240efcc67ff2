import { defined, JobDataError } from '../errors.js';
import {
  ORDER_FIELDS,
  ORDER_FIELD_TABLE,
  PRODUCTS,
  type NormalizedRow,
  type OrderField,
  type OrderPayload,
} from './orderFields.js';
import { NEWEST_PACKED_LAYOUT, PACKED_LAYOUTS, packedLayoutVersion, type PackedLayout } from './packedLayouts.js';

/**
 * The API's nested order shape, walked with the paths of ORDER_FIELD_TABLE: building a payload
 * from flat rows, reading flat rows back from a payload, and knowing which keys each nested
 * object of a JSON order may have.
 */

type JsonObject = Record<string, unknown>;

const PREFIX = `${PRODUCTS}.`;
const SENT = ORDER_FIELD_TABLE.filter((spec) => !('payload' in spec));
/** Fields of the order as a whole (one value per order), with their path (and its steps, split once). */
const HEAD = SENT.filter((spec) => !spec.path.startsWith(PREFIX)).map((spec) => ({
  name: spec.name,
  path: spec.path,
  steps: spec.path.split('.'),
}));
/** Fields of one product line, with their path inside the line. */
const LINE = SENT.filter((spec) => spec.path.startsWith(PREFIX)).map((spec) => ({
  name: spec.name,
  path: spec.path.slice(PREFIX.length),
  steps: spec.path.slice(PREFIX.length).split('.'),
}));

/** The names of the product-line fields (`productId`, `quantity`). */
export const PRODUCT_FIELDS: ReadonlySet<string> = new Set(LINE.map((spec) => spec.name));

/**
 * The API payload from the valid rows of one order; the order's fields come from the first row,
 * one product line per row. Keys come in table order (the spec's order); absent optional
 * values are left out.
 */
export function buildPayload(rows: readonly NormalizedRow[]): OrderPayload {
  const first = defined(rows[0], 'the first row of an order');
  const payload: JsonObject = {};
  for (const spec of HEAD) placeAtSteps(payload, spec.steps, first[spec.name]);
  payload[PRODUCTS] = rows.map((row) => {
    const line: JsonObject = {};
    for (const spec of LINE) placeAtSteps(line, spec.steps, row[spec.name]);
    return line;
  });
  // The paths walked above are the ones OrderPayload is derived from (orderFields.ts).
  return payload as OrderPayload;
}

/**
 * A payload without its field names, for job data (a chunk job holds ten of them): the order's
 * values in table order, then each product line's, `null` where a value is absent. About half
 * the bytes of its JSON. Positions mean something only with the layout they were packed in
 * (packedLayouts.ts): a chunk job names it, and `unpackPayload` places each value by that
 * layout's path, keys in the layout's order.
 */
export type PackedPayload = [head: (string | number | null)[], lines: (string | number | null)[][]];

/** The layout packPayload writes: the table's paths. */
export const PACKED_LAYOUT: PackedLayout = { head: HEAD.map((spec) => spec.path), line: LINE.map((spec) => spec.path) };

/**
 * Its version in PACKED_LAYOUTS; undefined when the table changed and no row was added there, and
 * then nothing is packed (test/ingest/packPayload.test.ts fails until the row is added).
 */
export const PACKED_LAYOUT_VERSION: number | undefined = packedLayoutVersion(PACKED_LAYOUT);

export function packPayload(payload: OrderPayload): PackedPayload {
  const leaf = (object: unknown, steps: readonly string[]): string | number | null => {
    const value = valueAtSteps(object, steps);
    return typeof value === 'string' || typeof value === 'number' ? value : null;
  };
  return [
    HEAD.map((spec) => leaf(payload, spec.steps)),
    payload[PRODUCTS].map((product) => LINE.map((spec) => leaf(product, spec.steps))),
  ];
}

/**
 * packPayload's output when it unpacks in PACKED_LAYOUT to exactly the payload (the same JSON
 * text), else undefined, decided without unpacking: the payload's defined keys, in their order, are
 * the layout's where a value was packed, and every leaf is the string or number packed. The same
 * answer as sameJson(unpackPayload(packed, PACKED_LAYOUT_VERSION), payload) (test/ingest/packPayload.test.ts).
 */
export function packPayloadExactly(payload: OrderPayload): PackedPayload | undefined {
  const packed = packPayload(payload);
  const [head, lines] = packed;
  const products: unknown = payload[PRODUCTS];
  if (!sameKeys(payload, HEAD_TREE, head, true) || !Array.isArray(products) || products.length !== lines.length)
    return undefined;
  for (const [i, line] of lines.entries()) if (!sameKeys(products[i], LINE_TREE, line, false)) return undefined;
  return packed;
}

/** A layout's paths as a tree: each object's keys in the order unpackPayload places them, a leaf its value's index. */
interface KeyTree {
  /** Each key with what is below it, in the order placed. */
  readonly entries: [string, KeyTree | number][];
  readonly below: Map<string, KeyTree | number>;
}

function keyTree(paths: readonly (readonly string[])[]): KeyTree {
  const root: KeyTree = { entries: [], below: new Map() };
  paths.forEach((steps, index) => {
    let at = root;
    steps.forEach((step, s) => {
      let next = at.below.get(step);
      if (next === undefined) {
        next = s === steps.length - 1 ? index : { entries: [], below: new Map() };
        at.entries.push([step, next]);
        at.below.set(step, next);
      }
      if (typeof next === 'number') return;
      at = next;
    });
  });
  return root;
}

const HEAD_TREE = keyTree(HEAD.map((spec) => spec.steps));
const LINE_TREE = keyTree(LINE.map((spec) => spec.steps));

/**
 * True when `object`'s defined keys are, in order, `tree`'s keys that hold a packed value (an
 * object: a value somewhere below it), each leaf the very value packed and each inner key an
 * object of its own matching its subtree; `products` last when `withProducts` (checked by the caller).
 */
function sameKeys(object: unknown, tree: KeyTree, values: readonly unknown[], withProducts: boolean): boolean {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return false;
  const record = object as JsonObject;
  let expected = 0;
  for (const key in record) {
    if (!Object.hasOwn(record, key) || record[key] === undefined) continue;
    // The next of the tree's keys that unpacking places (one holding a value), or products after them all.
    let next = tree.entries[expected];
    while (next !== undefined && !holdsValue(next[1], values)) {
      expected++;
      next = tree.entries[expected];
    }
    if (next === undefined) {
      if (!(withProducts && key === PRODUCTS && expected === tree.entries.length)) return false;
      expected++; // products: nothing may follow it
      continue;
    }
    const [nextKey, below] = next;
    if (key !== nextKey) return false;
    if (typeof below === 'number' ? record[key] !== values[below] : !sameKeys(record[key], below, values, false))
      return false;
    expected++;
  }
  // Whatever the tree still expects must hold no value; products must have been there when asked for.
  if (tree.entries.slice(expected).some(([, below]) => holdsValue(below, values))) return false;
  return !withProducts || expected === tree.entries.length + 1;
}

function holdsValue(node: KeyTree | number, values: readonly unknown[]): boolean {
  if (typeof node === 'number') return values[node] !== null;
  return node.entries.some(([, below]) => holdsValue(below, values));
}

/**
 * The payload packed in layout `version` (1: a job from before layouts had versions). Refuses,
 * rather than guess, a layout this code does not know (JOB_DATA_NEWER) and values that do not
 * fit their layout's lengths and types (JOB_DATA_MALFORMED).
 */
export function unpackPayload(packed: unknown, version = 1): OrderPayload {
  const layout = PACKED_LAYOUTS[version];
  if (layout === undefined) {
    throw new JobDataError(
      'JOB_DATA_NEWER',
      `a payload packed in layout ${version}; this bulkorder knows layouts 1 to ${NEWEST_PACKED_LAYOUT}`,
      { layout: version, known: NEWEST_PACKED_LAYOUT },
    );
  }
  if (!fitsLayout(packed, layout)) {
    throw new JobDataError(
      'JOB_DATA_MALFORMED',
      `a packed payload does not fit layout ${version} (${layout.head.length} order values, ${layout.line.length} per product line)`,
      { layout: version },
    );
  }
  const [head, lines] = packed;
  const steps = layoutSteps(version, layout);
  const payload: JsonObject = {};
  steps.head.forEach((path, i) => placeAtSteps(payload, path, head[i] ?? undefined));
  payload[PRODUCTS] = lines.map((values) => {
    const line: JsonObject = {};
    steps.line.forEach((path, i) => placeAtSteps(line, path, values[i] ?? undefined));
    return line;
  });
  // The paths walked are the ones OrderPayload is derived from (orderFields.ts), as in buildPayload;
  // an older layout's paths are a subset of them or the API's since.
  return payload as OrderPayload;
}

/** Each layout's paths split into steps, once per layout. */
const LAYOUT_STEPS = new Map<number, { head: string[][]; line: string[][] }>();

function layoutSteps(version: number, layout: PackedLayout): { head: string[][]; line: string[][] } {
  let steps = LAYOUT_STEPS.get(version);
  if (steps === undefined) {
    steps = { head: layout.head.map((path) => path.split('.')), line: layout.line.map((path) => path.split('.')) };
    LAYOUT_STEPS.set(version, steps);
  }
  return steps;
}

function fitsLayout(packed: unknown, layout: PackedLayout): packed is PackedPayload {
  const leaves = (values: unknown, length: number): boolean =>
    Array.isArray(values) &&
    values.length === length &&
    values.every((v) => v === null || typeof v === 'string' || typeof v === 'number');
  return (
    Array.isArray(packed) &&
    packed.length === 2 &&
    leaves(packed[0], layout.head.length) &&
    Array.isArray(packed[1]) &&
    packed[1].every((line) => leaves(line, layout.line.length))
  );
}

/** The flat fields of each product line of a payload (orderRef is not in a payload: `orderRef` gives it). */
export function payloadLines(
  payload: OrderPayload,
  orderRef: string | undefined,
): Partial<Record<OrderField, string | number>>[] {
  const head: Partial<Record<OrderField, string | number>> = orderRef === undefined ? {} : { orderRef };
  for (const spec of HEAD) {
    const value = valueAtSteps(payload, spec.steps);
    if (typeof value === 'string' || typeof value === 'number') head[spec.name] = value;
  }
  return payload[PRODUCTS].map((product) => {
    const line = { ...head };
    for (const spec of LINE) {
      const value = valueAtSteps(product, spec.steps);
      if (typeof value === 'string' || typeof value === 'number') line[spec.name] = value;
    }
    return line;
  });
}

/** Where each of ORDER_FIELDS comes from in a payload: its path in the order, in a product line, or neither. */
const FIELD_SOURCES = ORDER_FIELDS.map((name) => ({
  head: HEAD.find((spec) => spec.name === name)?.steps,
  line: LINE.find((spec) => spec.name === name)?.steps,
  isRef: name === 'orderRef',
}));

/**
 * payloadLines(payload, orderRef) as text, one row per product line in ORDER_FIELDS order (a value
 * absent: ''), without an object per line: the cells an import compares with the input's
 * (src/kinds/originalRows.ts canonicalRows).
 */
export function payloadCells(payload: OrderPayload, orderRef: string): string[][] {
  const head = FIELD_SOURCES.map((source) => {
    const value = source.head === undefined ? undefined : valueAtSteps(payload, source.head);
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    return source.isRef ? orderRef : '';
  });
  return payload[PRODUCTS].map((product) => {
    const row = head.slice();
    for (const [i, { line: steps }] of FIELD_SOURCES.entries()) {
      if (steps === undefined) continue;
      const value = valueAtSteps(product, steps);
      if (typeof value === 'string' || typeof value === 'number') row[i] = String(value);
    }
    return row;
  });
}

/**
 * The keys each object of a JSON order in the API's shape may have, by its path (`` for the
 * order itself, `recipient`, `recipient.address`, `products` for each product line), outer
 * objects first.
 */
export const API_KEYS: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const keys = new Map<string, Set<string>>();
  for (const spec of ORDER_FIELD_TABLE) {
    const parts = spec.path.split('.');
    parts.forEach((part, i) => {
      const parent = parts.slice(0, i).join('.');
      let set = keys.get(parent);
      if (set === undefined) keys.set(parent, (set = new Set()));
      set.add(part);
    });
  }
  return keys;
})();

/** The value at a dotted path, or undefined when a step is missing or not an object. */
export function valueAt(object: unknown, path: string): unknown {
  return valueAtSteps(object, path.split('.'));
}

/** valueAt with the path already split at its dots. */
function valueAtSteps(object: unknown, steps: readonly string[]): unknown {
  let at: unknown = object;
  for (const step of steps) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as JsonObject)[step];
  }
  return at;
}

/** The object at a path ({} when anything on the way is not an object), like an empty nested object. */
export function objectAt(object: unknown, path: string): JsonObject {
  const value = path === '' ? object : valueAt(object, path);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

/** Sets `value` at the path `steps` (split at its dots), making the objects on the way; nothing for undefined. */
/* eslint-disable @typescript-eslint/no-non-null-assertion -- every index is below steps.length, and a path has a step;
   a per-field, per-row loop that does not copy `steps` */
function placeAtSteps(target: JsonObject, steps: readonly string[], value: unknown): void {
  if (value === undefined) return;
  let at = target;
  const last = steps.length - 1;
  for (let i = 0; i < last; i++) {
    const next = at[steps[i]!];
    if (typeof next === 'object' && next !== null) at = next as JsonObject;
    else at = at[steps[i]!] = {};
  }
  at[steps[last]!] = value;
}
/* eslint-enable @typescript-eslint/no-non-null-assertion */
