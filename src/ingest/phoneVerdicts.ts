import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { Metadata } from 'libphonenumber-js/core';
import maxMetadata from 'libphonenumber-js/metadata.max.json';
import { ALL, DigitPattern, SOME, UnsupportedPattern } from './digitPattern.js';

/**
 * Whether a phone number written as `+` and digits is a valid E.164 number exactly as written: what
 * libphonenumber says (parsed, possible, valid, and its E.164 form the text itself), the reference.
 *
 * Its parse is the dearest check of a row, and the numbers of a file are nearly all different, so the
 * verdicts are kept by calling code, length and leading digits instead of by number: libphonenumber
 * decides a number only through regular expressions over its national digits (the metadata's
 * patterns, possible lengths, leading digits, national prefix). When every pattern of every region
 * sharing the calling code matches all numbers of that length and those leading digits, or none of
 * them (DigitPattern says so for all of them at once), and no national prefix can be taken off, every
 * such number goes through libphonenumber the same way: one number's verdict is the verdict of all.
 * So a verdict is asked of libphonenumber once per (calling code, length, leading digits) and is the
 * same it gives for each number: test/ingest/phoneVerdicts.test.ts holds the two equal over numbers of
 * every calling code. A calling code whose metadata holds a pattern DigitPattern does not model (an
 * anchor, as in the national prefixes of +1's islands or +44's crown dependencies) is always asked.
 */
export function libphonenumberVerdict(raw: string): boolean {
  const parsed = parsePhoneNumberFromString(raw);
  return parsed !== undefined && parsed.isPossible() && parsed.isValid() && parsed.number === raw;
}

/**
 * Numbers whose verdict is asked each time (a calling code not modelled, a national prefix) are kept
 * for a while: a person's number repeats on every product line of their order. Two generations: the
 * last 2,048 to 4,096 numbers, without an LRU's bookkeeping per hit.
 */
const ASKED_CACHE_SIZE = 2048;
let asked = new Map<string, boolean>();
let askedBefore = new Map<string, boolean>();

/**
 * How many verdicts came from the nodes kept, how many were asked of libphonenumber, and how many calling codes' plans
 * were made (a test reads them).
 */
export const phoneVerdictCounts = {
  kept: 0,
  asked: 0,
  get plans(): number {
    return plans.size;
  },
};

/**
 * The first numbers of a process are asked of libphonenumber, one by one: the verdicts kept pay only past them. Their
 * nodes are made by walking the metadata's patterns, ~33 ms of CPU for the first numbers of +31, +32 and +49 (the
 * patterns compiled, the first nodes looked at), the price of ~1,500 numbers asked (~0.02 ms each); a small file's
 * start paid it for a few dozen numbers (BENCHMARKS.md round 15). A file of more numbers loses ~20 ms at most.
 */
const ASKED_FIRST = 1000;
let askedFirst = 0;

function ask(raw: string): boolean {
  phoneVerdictCounts.asked++;
  let verdict = asked.get(raw) ?? askedBefore.get(raw);
  verdict ??= libphonenumberVerdict(raw);
  if (asked.size >= ASKED_CACHE_SIZE) {
    askedBefore = asked;
    asked = new Map();
  }
  asked.set(raw, verdict);
  return verdict;
}

/** Prefix nodes kept at most (each up to ten children): a bound on memory whatever numbers a file holds. */
const MAX_NODES = 20_000;
/** National numbers longer than this are left to libphonenumber (it refuses them anyway). */
const MAX_NATIONAL_DIGITS = 17;

interface Plan {
  /** Every pattern of the calling code's regions: each must match all or none of a prefix's numbers. */
  patterns: DigitPattern[];
  /** The national prefixes (for parsing): none of a prefix's numbers may start with one. */
  nationalPrefixes: DigitPattern[];
}

/** A node of the digits after the calling code: the verdict of all numbers below it, once known. */
interface Node {
  verdict?: boolean;
  /** Looked at: its numbers do not all go the same way (look deeper), or never can (ask libphonenumber). */
  looked?: 'deeper' | 'never';
  children?: (Node | undefined)[];
}

/** The metadata's JSON, as libphonenumber-js keeps it (its types leave it out). */
interface MetadataJson {
  country_calling_codes: Record<string, string[] | undefined>;
  countries: Record<string, unknown>;
  nonGeographic?: Record<string, unknown>;
}

let metadata: Metadata | undefined;
let json: MetadataJson | undefined;
const plans = new Map<string, Plan | null>();
const roots = new Map<string, Node>();
let nodes = 0;

/** Like libphonenumberVerdict, for text that is `+` and at least two digits, from the verdicts kept. */
export function validE164(raw: string): boolean {
  if (askedFirst < ASKED_FIRST) {
    askedFirst++;
    return ask(raw);
  }
  const codes = loaded().json;
  // libphonenumber's own choice: the first of 1, 2, 3 digits that is a calling code.
  let code: string | undefined;
  for (let length = 1; length <= 3 && length < raw.length; length++) {
    const digits = raw.slice(1, 1 + length);
    if (codes.country_calling_codes[digits] !== undefined || codes.nonGeographic?.[digits] !== undefined) {
      code = digits;
      break;
    }
  }
  if (code === undefined) return ask(raw);
  const national = raw.slice(1 + code.length);
  if (national.length === 0 || national.length > MAX_NATIONAL_DIGITS) return ask(raw);
  const plan = planOf(code);
  if (plan === null) return ask(raw);
  const rootKey = `${code}/${national.length}`;
  let node: Node | undefined = roots.get(rootKey);
  if (node === undefined) {
    node = {};
    roots.set(rootKey, node);
  }
  for (let depth = 0; ; depth++) {
    if (node.verdict !== undefined) {
      phoneVerdictCounts.kept++;
      return node.verdict;
    }
    if (node.looked === undefined) {
      const seen = look(plan, national.slice(0, depth), national.length - depth);
      if (seen === 'same') return (node.verdict = libphonenumberVerdict(raw)); // one number stands for all below
      node.looked = seen;
    }
    if (node.looked === 'never' || depth === national.length) return ask(raw);
    const digit = national.charCodeAt(depth) - 48;
    node.children ??= [];
    let child: Node | undefined = node.children[digit];
    if (child === undefined) {
      if (nodes >= MAX_NODES) return ask(raw);
      nodes++;
      child = {};
      node.children[digit] = child;
    }
    node = child;
  }
}

/** Whether all numbers `prefix` + `rest` digits go through libphonenumber alike (`same`), may at a longer prefix, or never. */
function look(plan: Plan, prefix: string, rest: number): 'same' | 'deeper' | 'never' {
  let deeper = false;
  for (const pattern of plan.nationalPrefixes) {
    const cover = pattern.coverage(prefix, rest, true);
    if (cover === ALL) return 'never'; // a national prefix would be taken off: not the text as written
    if (cover === SOME) deeper = true;
  }
  if (deeper) return 'deeper';
  for (const pattern of plan.patterns) {
    if (pattern.coverage(prefix, rest, false) === SOME || pattern.coverage(prefix, rest, true) === SOME)
      return 'deeper';
  }
  return 'same';
}

/** The patterns of a calling code's regions; null when one of them is not a pattern DigitPattern models. */
function planOf(code: string): Plan | null {
  const known = plans.get(code);
  if (known !== undefined) return known;
  const { metadata: numbering, json: data } = loaded();
  let result: Plan | null = { patterns: [], nationalPrefixes: [] };
  try {
    const regions = data.country_calling_codes[code] ?? [];
    const blocks = [...regions.map((region) => data.countries[region]), data.nonGeographic?.[code]];
    const seen = new Set<string>();
    for (const text of blocks.flatMap((block) => (block === undefined ? [] : strings(block)))) {
      // Formatting templates ($1 $2) and extension labels are not patterns over the national number.
      if (/\$(?!\d)/.test(text)) throw new UnsupportedPattern(`an anchor in ${text}`);
      if (!/^(?:[\d()?:[\]{},|-]|\\d)+$/.test(text) || seen.has(text)) continue;
      seen.add(text);
      result.patterns.push(new DigitPattern(text));
    }
    for (const region of regions) {
      numbering.selectNumberingPlan(region as CountryCode);
      // Its own, or else the national prefix (libphonenumber-js's NumberingPlan; its types leave the method out).
      const plan = numbering.numberingPlan as unknown as { nationalPrefixForParsing(): string | undefined } | undefined;
      const prefix = plan?.nationalPrefixForParsing();
      if (prefix !== undefined && prefix !== '') result.nationalPrefixes.push(new DigitPattern(prefix));
    }
  } catch (error) {
    if (!(error instanceof UnsupportedPattern)) throw error;
    result = null;
  }
  plans.set(code, result);
  return result;
}

/** The metadata, loaded at the first use. */
function loaded(): { metadata: Metadata; json: MetadataJson } {
  metadata ??= new Metadata(maxMetadata);
  json ??= (metadata as unknown as { metadata: MetadataJson }).metadata;
  return { metadata, json };
}

/** Every string in a metadata block, however deep. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}
