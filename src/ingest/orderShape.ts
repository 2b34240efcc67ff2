import { JobDataError } from '../errors.js';
import { ORDER_FIELD_TABLE, PRODUCTS, type NormalizedRow, type OrderField, type OrderPayload } from './orderFields.js';
import { NEWEST_PACKED_LAYOUT, PACKED_LAYOUTS, packedLayoutVersion, type PackedLayout } from './packedLayouts.js';

/**
 * The API's nested order shape, walked with the paths of ORDER_FIELD_TABLE: building a payload
 * from flat rows, reading flat rows back from a payload, and knowing which keys each nested
 * object of a JSON order may have.
 */

type JsonObject = Record<string, unknown>;

const PREFIX = `${PRODUCTS}.`;
const SENT = ORDER_FIELD_TABLE.filter((spec) => !('payload' in spec));
/** Fields of the order as a whole (one value per order), with their path. */
const HEAD = SENT.filter((spec) => !spec.path.startsWith(PREFIX));
/** Fields of one product line, with their path inside the line. */
const LINE = SENT.filter((spec) => spec.path.startsWith(PREFIX)).map((spec) => ({
  name: spec.name,
  path: spec.path.slice(PREFIX.length),
}));

/** The names of the product-line fields (`productId`, `quantity`). */
export const PRODUCT_FIELDS: ReadonlySet<string> = new Set(LINE.map((spec) => spec.name));

/**
 * The API payload from the valid rows of one order; the order's fields come from the first row,
 * one product line per row. Keys come in table order (the spec's order); absent optional
 * values are left out.
 */
export function buildPayload(rows: readonly NormalizedRow[]): OrderPayload {
  const first = rows[0]!;
  const payload: JsonObject = {};
  for (const spec of HEAD) placeAt(payload, spec.path, first[spec.name]);
  payload[PRODUCTS] = rows.map((row) => {
    const line: JsonObject = {};
    for (const spec of LINE) placeAt(line, spec.path, row[spec.name]);
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
  const leaf = (object: unknown, path: string): string | number | null => {
    const value = valueAt(object, path);
    return typeof value === 'string' || typeof value === 'number' ? value : null;
  };
  return [
    HEAD.map((spec) => leaf(payload, spec.path)),
    payload[PRODUCTS].map((product) => LINE.map((spec) => leaf(product, spec.path))),
  ];
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
  const payload: JsonObject = {};
  layout.head.forEach((path, i) => placeAt(payload, path, head[i] ?? undefined));
  payload[PRODUCTS] = lines.map((values) => {
    const line: JsonObject = {};
    layout.line.forEach((path, i) => placeAt(line, path, values[i] ?? undefined));
    return line;
  });
  // The paths walked are the ones OrderPayload is derived from (orderFields.ts), as in buildPayload;
  // an older layout's paths are a subset of them or the API's since.
  return payload as OrderPayload;
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
    const value = valueAt(payload, spec.path);
    if (typeof value === 'string' || typeof value === 'number') head[spec.name] = value;
  }
  return payload[PRODUCTS].map((product) => {
    const line = { ...head };
    for (const spec of LINE) {
      const value = valueAt(product, spec.path);
      if (typeof value === 'string' || typeof value === 'number') line[spec.name] = value;
    }
    return line;
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
  let at: unknown = object;
  for (const part of path.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as JsonObject)[part];
  }
  return at;
}

/** The object at a path ({} when anything on the way is not an object), like an empty nested object. */
export function objectAt(object: unknown, path: string): JsonObject {
  const value = path === '' ? object : valueAt(object, path);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}

function placeAt(target: JsonObject, path: string, value: unknown): void {
  if (value === undefined) return;
  const parts = path.split('.');
  const leaf = parts.pop()!;
  let at = target;
  for (const part of parts) {
    const next = at[part];
    if (typeof next === 'object' && next !== null) at = next as JsonObject;
    else at = at[part] = {};
  }
  at[leaf] = value;
}
