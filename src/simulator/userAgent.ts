/**
 * The User-Agent rule of the spec (section 5): `<brand>-<CompanyName>`. Library defaults are
 * refused even when they happen to fit the pattern (`node-fetch`, `python-requests`), since
 * they identify no client company.
 */

const SHAPE = /^[A-Za-z0-9]+-[A-Za-z0-9][A-Za-z0-9._-]*$/;

// Lowercased brands (the part before the first dash) that are HTTP libraries or tools.
const LIBRARY_BRANDS = new Set([
  'undici',
  'node',
  'nodejs',
  'curl',
  'axios',
  'got',
  'fetch',
  'python',
  'aiohttp',
  'httpx',
  'okhttp',
  'java',
  'go',
  'wget',
  'postman',
  'insomnia',
  'httpie',
  'libwww',
  'apache',
  'mozilla',
  'ruby',
  'php',
  'guzzle',
  'dart',
  'reqwest',
  'powershell',
  'superagent',
  'requests',
  'urllib',
]);

/** Why a User-Agent is refused, or undefined when it is acceptable. */
export function userAgentProblem(value: string | undefined): string | undefined {
  if (value === undefined || value === '')
    return 'The User-Agent header is required, in the form <brand>-<CompanyName>.';
  if (!SHAPE.test(value)) return 'The User-Agent header must have the form <brand>-<CompanyName>, e.g. Acme-AcmeGifts.';
  const brand = value.slice(0, value.indexOf('-')).toLowerCase();
  if (LIBRARY_BRANDS.has(brand))
    return 'The User-Agent header names an HTTP library, not the client company (<brand>-<CompanyName>).';
  return undefined;
}
