import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { classifyHost, targetId, type HostRules } from '../../src/target.js';

const AUTO_ONLY: HostRules = { production: [], acceptance: ['auto'] };

describe('host rules', () => {
  it.each([
    ['127.0.0.1', 'acceptance'],
    ['[::1]', 'acceptance'],
    ['localhost', 'acceptance'],
    ['api.example.test', 'acceptance'],
    ['api-acc.vendor.nl', 'acceptance'],
    ['acceptance.vendor.nl', 'acceptance'],
    ['api.staging.vendor.nl', 'acceptance'],
    ['api.vendor.nl', 'unknown'],
    ['accentgifts.nl', 'unknown'], // a word, not an acceptance label
    ['api.latest.vendor.nl', 'unknown'],
  ])('auto classifies %s as %s', (host, expected) => {
    expect(classifyHost(host, AUTO_ONLY)).toBe(expected);
  });

  it('a production pattern wins over the acceptance rule; *.domain matches subdomains only', () => {
    const rules: HostRules = { production: ['*.vendor.nl'], acceptance: ['auto', 'api.other.nl'] };
    expect(classifyHost('api-acc.vendor.nl', rules)).toBe('production');
    expect(classifyHost('vendor.nl', rules)).toBe('unknown');
    expect(classifyHost('API.OTHER.NL', rules)).toBe('acceptance');
  });

  it('refuses at load, naming both variables, wherever the URL came from', () => {
    const refuse = (env: Record<string, string>) => {
      try {
        loadConfig({ env });
      } catch (error) {
        if (error instanceof ConfigError) return error.message;
        throw error;
      }
      return 'accepted';
    };
    expect(
      refuse({ BULKORDER_BASE_URL: 'https://api.vendor.nl', BULKORDER_PRODUCTION_HOSTS: 'api.vendor.nl' }),
    ).toMatch(/^BULKORDER_ENV: .*acceptance \(default\).*BULKORDER_BASE_URL.*production host/);
    expect(refuse({ BULKORDER_BASE_URL: 'https://api.vendor.nl' })).toMatch(/BULKORDER_ACCEPTANCE_HOSTS/);
    expect(
      refuse({ BULKORDER_BASE_URL: 'https://api.vendor.nl', BULKORDER_ACCEPTANCE_HOSTS: 'auto,api.vendor.nl' }),
    ).toBe('accepted');
    expect(
      refuse({ BULKORDER_BASE_URL: 'https://api-acc.vendor.nl', BULKORDER_AUTH_URL: 'https://login.vendor.nl' }),
    ).toMatch(/BULKORDER_AUTH_URL/);
    const production = { BULKORDER_ENV: 'production', BULKORDER_CONFIRM_PRODUCTION: 'yes' };
    expect(refuse({ ...production, BULKORDER_BASE_URL: 'https://api.example.test' })).toMatch(/acceptance host/);
    expect(refuse({ ...production, BULKORDER_BASE_URL: 'https://api.vendor.nl' })).toBe('accepted');
    expect(
      refuse({
        ...production,
        BULKORDER_BASE_URL: 'https://api2.vendor.nl',
        BULKORDER_PRODUCTION_HOSTS: 'api.vendor.nl',
      }),
    ).toMatch(/not one of BULKORDER_PRODUCTION_HOSTS/);
    expect(refuse({ BULKORDER_PRODUCTION_HOSTS: 'http://x' })).toMatch(/^BULKORDER_PRODUCTION_HOSTS: /);
  });

  it('a target id is stable and differs by environment, URL and client id', () => {
    const id = targetId('acceptance', 'https://api.example.test/business-api', 'c');
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(targetId('acceptance', 'https://API.example.test:443/business-api/', 'c')).toBe(id);
    expect(
      new Set([
        id,
        targetId('production', 'https://api.example.test/business-api', 'c'),
        targetId('acceptance', 'https://api.example.test/cafetariaplan-api', 'c'),
        targetId('acceptance', 'https://api.example.test/business-api', 'd'),
      ]).size,
    ).toBe(4);
  });
});
