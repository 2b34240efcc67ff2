import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { getCountries, getCountryCallingCode, getExampleNumber } from 'libphonenumber-js/max';
import maxMetadata from 'libphonenumber-js/metadata.max.json';
import examples from 'libphonenumber-js/mobile/examples';
import { libphonenumberVerdict, phoneVerdictCounts, validE164 } from '../../src/ingest/phoneVerdicts.js';
import { ALL, DigitPattern, NONE, SOME, UnsupportedPattern } from '../../src/ingest/digitPattern.js';
import { e164Verdict } from '../../src/ingest/acceptRow.js';
import { mulberry32 } from '../../bench/generateOrders.js';
import { projectRoot } from '../../src/paths.js';

const moduleUrl = pathToFileURL(join(projectRoot, 'src/ingest/phoneVerdicts.ts')).href;

const random = mulberry32(Number(process.env.PHONE_SEED ?? 2035));
const digits = (n: number): string => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');

/** Every calling code of the metadata, geographic or not. */
function callingCodes(): string[] {
  const nonGeographic = Object.keys((maxMetadata as { nonGeographic: Record<string, unknown> }).nonGeographic);
  return [...new Set([...getCountries().map((c) => getCountryCallingCode(c)), ...nonGeographic])];
}

/**
 * Numbers of every calling code: each region's example number with its last digits changed, cut or
 * lengthened, random national numbers of every length from 1 to 17 digits, national numbers that start
 * with a 0 (a national prefix), and codes followed by nothing sensible.
 */
function numbers(): string[] {
  const out: string[] = [];
  for (const code of callingCodes()) {
    for (let length = 1; length <= 17; length++) for (let i = 0; i < 6; i++) out.push(`+${code}${digits(length)}`);
    for (let i = 0; i < 10; i++) out.push(`+${code}0${digits(6 + Math.floor(random() * 6))}`);
  }
  for (const country of getCountries()) {
    const example = getExampleNumber(country, examples);
    if (example === undefined) continue;
    const national = example.nationalNumber;
    const code = example.countryCallingCode;
    for (let i = 0; i < 40; i++) {
      const keep = Math.max(1, national.length - 1 - Math.floor(random() * 4));
      const extra = Math.floor(random() * 3) - 1; // one digit fewer, as many, or one more
      out.push(`+${code}${national.slice(0, keep)}${digits(Math.max(0, national.length - keep + extra))}`);
    }
    out.push(`+${code}${national}`);
  }
  // Shuffled, so verdicts kept for a prefix are met by later numbers in any order.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('phone verdicts kept by calling code, length and leading digits', () => {
  it("a process's first 1,000 numbers are asked of libphonenumber alone; past them, verdicts are kept", () => {
    // In a process of its own: the module as a command starts it (the fast tier shares modules between files).
    const script = `
      const { libphonenumberVerdict, phoneVerdictCounts, validE164 } = await import(${JSON.stringify(moduleUrl)});
      const numbers = JSON.parse(process.argv[1]);
      let wrong = 0;
      const counts = [];
      for (const [i, raw] of numbers.entries()) {
        if (validE164(raw) !== libphonenumberVerdict(raw)) wrong++;
        if (i === 999 || i === numbers.length - 1) counts.push({ ...phoneVerdictCounts });
      }
      console.log(JSON.stringify({ wrong, counts }));`;
    const dutch = Array.from({ length: 1_200 }, () => `+316${digits(8)}`);
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script, JSON.stringify(dutch)],
      { cwd: projectRoot, encoding: 'utf8' },
    );
    expect(child.status, child.stderr).toBe(0);
    const { wrong, counts } = JSON.parse(child.stdout) as { wrong: number; counts: Record<string, number>[] };
    expect(wrong).toBe(0);
    expect(counts[0]).toEqual({ kept: 0, asked: 1_000, plans: 0 });
    expect(counts[1]?.plans).toBe(1);
    expect(counts[1]?.kept).toBeGreaterThan(100);
  });

  it('give exactly the verdicts of libphonenumber, number by number, over every calling code', () => {
    const all = numbers();
    expect(all.length).toBeGreaterThan(30_000);
    let valid = 0;
    const wrong: string[] = [];
    phoneVerdictCounts.kept = 0;
    phoneVerdictCounts.asked = 0;
    for (const pass of [1, 2]) {
      for (const raw of all) {
        const expected = libphonenumberVerdict(raw);
        if (validE164(raw) !== expected) wrong.push(`${raw} (pass ${pass}): libphonenumber says ${expected}`);
        if (pass === 1 && expected) valid++;
      }
    }
    expect(wrong.slice(0, 20)).toEqual([]);
    // Most verdicts of the second pass come from the kept nodes (not asked again), else this compares libphonenumber with itself.
    expect(phoneVerdictCounts.kept).toBeGreaterThan(all.length / 2);
    expect(valid).toBeGreaterThan(3_000); // the set holds valid numbers as well as invalid ones
    if (process.env.PHONE_SEED !== undefined) console.log(all.length, phoneVerdictCounts);
  }, 300_000);

  it('the accept path takes the same numbers it took from libphonenumber directly', () => {
    for (const raw of [
      '+31612345678',
      '+3161234567',
      '+32470123456',
      '+4915112345678',
      '+972501234511',
      '+12025550123',
    ])
      expect(e164Verdict(raw), raw).toBe(libphonenumberVerdict(raw));
    expect(e164Verdict('+31 612345678')).toBe(false); // spacing: validateRow's to note
  });
});

describe('DigitPattern', () => {
  it('answers for all strings of a length after a prefix at once: all, none or some', () => {
    const mobile = new DigitPattern('(?:6[1-58]|970\\d)\\d{7}');
    expect(mobile.coverage('', 9, false)).toBe(SOME);
    expect(mobile.coverage('6', 8, false)).toBe(SOME);
    expect(mobile.coverage('61', 7, false)).toBe(ALL);
    expect(mobile.coverage('69', 7, false)).toBe(NONE);
    expect(mobile.coverage('61', 8, false)).toBe(NONE); // ten digits: too long
    const prefix = new DigitPattern('0|180020');
    expect(prefix.coverage('6', 8, true)).toBe(NONE);
    expect(prefix.coverage('0', 8, true)).toBe(ALL);
    expect(prefix.coverage('1', 8, true)).toBe(SOME);
    expect(new DigitPattern('\\d{2,4}').coverage('', 3, false)).toBe(ALL);
    expect(new DigitPattern('[2-46-8]\\d?').coverage('5', 1, false)).toBe(NONE);
  });

  it('refuses what it does not model, so the caller asks libphonenumber', () => {
    for (const pattern of ['([25-9]\\d{5})$|0', '\\d+', '(?=1)\\d', 'a', '\\d{3,}'])
      expect(() => new DigitPattern(pattern), pattern).toThrow(UnsupportedPattern);
  });
});
