import { describe, expect, it } from 'vitest';
import { getCountries } from 'libphonenumber-js';
import { isCountryCode, isLanguageCode, isoCodeCounts } from '../../src/reference/isoCodes.js';

const region = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
const language = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

function allPairs(alphabet: string): string[] {
  const out: string[] = [];
  for (const a of alphabet) for (const b of alphabet) out.push(a + b);
  return out;
}

describe('isCountryCode', () => {
  it('holds exactly the 249 officially assigned ISO 3166-1 alpha-2 codes', () => {
    expect(isoCodeCounts.countries).toBe(249);
    const known = allPairs('ABCDEFGHIJKLMNOPQRSTUVWXYZ').filter(isCountryCode);
    expect(known).toHaveLength(249);
    // ICU knows a name for every one of them (it also names XK, EU, UN, QO, ... which are not assigned codes).
    for (const code of known) expect(region.of(code), code).toBeTruthy();
  });

  it('covers every phone-numbering country except the non-ISO ones', () => {
    const missing = getCountries().filter((code) => !isCountryCode(code));
    expect(missing.sort()).toEqual(['AC', 'TA', 'XK']);
  });

  it('refuses lowercase, user-assigned and reserved codes', () => {
    for (const code of ['nl', 'Nl', 'XK', 'UK', 'EU', 'ZZ', 'AN', 'NLD', '', ' NL'])
      expect(isCountryCode(code), code).toBe(false);
    for (const code of ['NL', 'BE', 'DE', 'AQ', 'SS', 'BQ']) expect(isCountryCode(code), code).toBe(true);
  });
});

describe('isLanguageCode', () => {
  it('holds the 183 current ISO 639-1 codes plus the withdrawn bh', () => {
    expect(isoCodeCounts.languages).toBe(184);
    const known = allPairs('abcdefghijklmnopqrstuvwxyz').filter(isLanguageCode);
    expect(known).toHaveLength(184);
    for (const code of known) expect(language.of(code), code).not.toBe(code);
  });

  it('refuses uppercase, three-letter and unknown codes', () => {
    for (const code of ['NL', 'Nl', 'nld', 'xx', 'jp', 'sh', '', 'nl-BE'])
      expect(isLanguageCode(code), code).toBe(false);
    for (const code of ['nl', 'fr', 'de', 'en', 'fy', 'lb', 'bh']) expect(isLanguageCode(code), code).toBe(true);
  });
});
