import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig, redisPrefix, requireApi, type Config } from '../../src/config.js';
import { ConfigError, ExitCode } from '../../src/errors.js';
import { projectRoot } from '../../src/paths.js';

const COMPLETE = {
  BULKORDER_BASE_URL: 'https://api.example.test',
  BULKORDER_USER_AGENT: 'Acme-AcmeTradingBV',
  BULKORDER_BUSINESS_CLIENT_ID: 'acme-business',
  BULKORDER_BUSINESS_CLIENT_SECRET: 'business-secret-value',
};

/** The ConfigError `load` throws, to assert on the variable it names. */
function refusal(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('needs nothing: defaults for everything, no API settings', () => {
    const config = loadConfig({ env: {} });
    expect(config.env).toBe('acceptance');
    expect(config.redisUrl.reveal()).toBe('redis://127.0.0.1:6379');
    expect(config.logLevel).toBe('info');
    expect(config.tokenAuth).toBe('body');
    expect(config.http).toEqual({
      connectTimeoutMs: 10_000,
      headersTimeoutMs: 30_000,
      bodyTimeoutMs: 30_000,
      deadlineMs: 60_000,
    });
    expect(config.baseUrl).toBeUndefined();
    expect(config.credentials).toEqual({});
    expect(config.responseFields.remoteId[0]).toBe('orderId');
    expect(refusal(() => redisPrefix(config)).variable).toBe('BULKORDER_BASE_URL');
  });

  it('is frozen all the way down', () => {
    const config = loadConfig({ env: COMPLETE });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.http)).toBe(true);
    expect(Object.isFrozen(config.credentials.business)).toBe(true);
    expect(() => {
      (config as { env: string }).env = 'production';
    }).toThrow(TypeError);
  });

  it('reads an env file above inherited environment variables, and says which it overrode; empty values mean unset', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bulkorder-config-'));
    const file = join(dir, '.env');
    await writeFile(
      file,
      'BULKORDER_USER_AGENT=File-FromTheFile\nLOG_LEVEL=debug\nBULKORDER_HTTP_DEADLINE_MS=\nBULKORDER_BASE_URL="http://localhost:8080/"\n',
    );
    const config = loadConfig({
      env: { LOG_LEVEL: 'warn', BULKORDER_USER_AGENT: 'File-FromTheFile', REDIS_URL: 'redis://127.0.0.1:6390' },
      envFile: file,
    });
    expect(config.logLevel).toBe('debug');
    expect(config.shadowed).toEqual(['LOG_LEVEL']);
    expect(config.sources).toMatchObject({
      LOG_LEVEL: 'env-file',
      BULKORDER_USER_AGENT: 'env-file',
      REDIS_URL: 'environment',
      BULKORDER_ENV: 'default',
    });
    expect(config.redisUrl.reveal()).toBe('redis://127.0.0.1:6390');
    expect(config.userAgent).toBe('File-FromTheFile');
    expect(config.http.deadlineMs).toBe(60_000);
    expect(config.baseUrl).toBe('http://localhost:8080');
    expect(config.authUrl).toBe('http://localhost:8080');
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses an unreadable env file, naming the flag', () => {
    expect(refusal(() => loadConfig({ env: {}, envFile: '/nonexistent/bulkorder.env' })).variable).toBe('--env-file');
  });

  it('accepts http:// for loopback hosts only', () => {
    for (const url of [
      'http://127.0.0.1:1234',
      'http://127.9.9.9',
      'http://localhost:80',
      'http://[::1]:8080',
      'https://api.example.test/prefix',
    ]) {
      expect(loadConfig({ env: { BULKORDER_BASE_URL: url } }).baseUrl).toBe(url);
    }
  });

  it('builds ApiSettings with the API path prefix and the token URL', () => {
    const settings = requireApi(
      loadConfig({ env: { ...COMPLETE, BULKORDER_AUTH_URL: 'https://auth.example.test/' } }),
      'business',
    );
    expect(settings.apiBaseUrl).toBe('https://api.example.test/business-api');
    expect(settings.tokenUrl).toBe('https://auth.example.test/oauth2/token');
    expect(settings.clientSecret.reveal()).toBe('business-secret-value');
  });

  it('keeps secrets out of JSON and util.inspect', () => {
    const config = loadConfig({ env: COMPLETE });
    expect(JSON.stringify(config)).not.toContain('business-secret-value');
    expect(inspect(config, { depth: 10 })).not.toContain('business-secret-value');
    // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- a Secret in a template literal is the case under test
    expect(`${requireApi(config, 'business').clientSecret}`).toBe('[redacted]');
  });

  it('namespaces Redis by target: environment, API base URL and client id', () => {
    const PRODUCTION = {
      ...COMPLETE,
      BULKORDER_ENV: 'production',
      BULKORDER_CONFIRM_PRODUCTION: 'yes',
      BULKORDER_BASE_URL: 'https://api.vendor.nl',
    };
    const prefixes = [
      redisPrefix(loadConfig({ env: COMPLETE })),
      redisPrefix(loadConfig({ env: { ...COMPLETE, BULKORDER_BASE_URL: 'https://other.example.test' } })),
      redisPrefix(loadConfig({ env: { ...COMPLETE, BULKORDER_BUSINESS_CLIENT_ID: 'acme-2' } })),
      redisPrefix(loadConfig({ env: PRODUCTION })),
    ];
    expect(prefixes[0]).toMatch(/^bulkorder:acceptance:[0-9a-f]{8}$/);
    expect(prefixes[3]).toMatch(/^bulkorder:production:[0-9a-f]{8}$/);
    expect(new Set(prefixes).size).toBe(4);
    // Stable: the same target gives the same prefix, whatever the case of the host or a trailing slash.
    expect(redisPrefix(loadConfig({ env: { ...COMPLETE, BULKORDER_BASE_URL: 'https://API.example.test/' } }))).toBe(
      prefixes[0],
    );
    const both = loadConfig({
      env: { ...COMPLETE, BULKORDER_CAFETARIAPLAN_CLIENT_ID: 'acme-cp', BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 's' },
    });
    expect(redisPrefix(both, 'cafetariaplan')).not.toBe(redisPrefix(both));
    expect(redisPrefix(both)).toBe(prefixes[0]);
  });

  it('accepts production when it is chosen explicitly, by variable or flag', () => {
    const byFlag = loadConfig({
      env: { ...COMPLETE, BULKORDER_ENV: 'production', BULKORDER_BASE_URL: 'https://api.vendor.nl' },
      confirmProduction: true,
    });
    expect(byFlag.env).toBe('production');
    expect(byFlag.productionConfirmed).toBe(true);
  });
});

// Every refusal exits 2 and names the variable a person must fix.
const REFUSALS: Array<[string, Record<string, string>, LoadOptions?]> = [
  ['BULKORDER_ENV', { BULKORDER_ENV: 'staging' }],
  ['BULKORDER_CONFIRM_PRODUCTION', { BULKORDER_ENV: 'production' }],
  ['BULKORDER_CONFIRM_PRODUCTION', { BULKORDER_ENV: 'production', BULKORDER_CONFIRM_PRODUCTION: 'true' }],
  ['BULKORDER_ENV', {}, { confirmProduction: true }],
  ['BULKORDER_BASE_URL', { BULKORDER_BASE_URL: 'http://api.example.test' }],
  ['BULKORDER_BASE_URL', { BULKORDER_BASE_URL: 'http://10.0.0.1:8080' }],
  ['BULKORDER_BASE_URL', { BULKORDER_BASE_URL: 'ftp://api.example.test' }],
  ['BULKORDER_BASE_URL', { BULKORDER_BASE_URL: 'not a url' }],
  ['BULKORDER_BASE_URL', { BULKORDER_BASE_URL: 'https://user:pw@api.example.test' }],
  [
    'BULKORDER_BASE_URL',
    { BULKORDER_ENV: 'production', BULKORDER_CONFIRM_PRODUCTION: 'yes', BULKORDER_BASE_URL: 'http://127.0.0.1:8080' },
  ],
  ['BULKORDER_AUTH_URL', { BULKORDER_AUTH_URL: 'http://auth.example.test' }],
  [
    'BULKORDER_AUTH_URL',
    { BULKORDER_ENV: 'production', BULKORDER_CONFIRM_PRODUCTION: 'yes', BULKORDER_AUTH_URL: 'http://localhost' },
  ],
  ['BULKORDER_USER_AGENT', { BULKORDER_USER_AGENT: 'AcmeTradingBV' }],
  ['BULKORDER_USER_AGENT', { BULKORDER_USER_AGENT: 'Acme Trading' }],
  ['BULKORDER_USER_AGENT', { BULKORDER_USER_AGENT: 'undici-Acme' }],
  ['BULKORDER_USER_AGENT', { BULKORDER_USER_AGENT: 'node-fetch' }],
  ['BULKORDER_USER_AGENT', { BULKORDER_USER_AGENT: 'curl-8.5.0' }],
  ['BULKORDER_BUSINESS_CLIENT_SECRET', { BULKORDER_BUSINESS_CLIENT_ID: 'only-the-id' }],
  ['BULKORDER_CAFETARIAPLAN_CLIENT_ID', { BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: 'only-the-secret' }],
  ['REDIS_URL', { REDIS_URL: 'http://127.0.0.1:6379' }],
  ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }],
  ['BULKORDER_TOKEN_AUTH', { BULKORDER_TOKEN_AUTH: 'jwt' }],
  ['BULKORDER_HTTP_CONNECT_TIMEOUT_MS', { BULKORDER_HTTP_CONNECT_TIMEOUT_MS: '10s' }],
  ['BULKORDER_HTTP_HEADERS_TIMEOUT_MS', { BULKORDER_HTTP_HEADERS_TIMEOUT_MS: '0' }],
  ['BULKORDER_HTTP_BODY_TIMEOUT_MS', { BULKORDER_HTTP_BODY_TIMEOUT_MS: '-5' }],
  ['BULKORDER_HTTP_DEADLINE_MS', { BULKORDER_HTTP_DEADLINE_MS: '99999999' }],
  ['BULKORDER_REMOTE_ID_FIELDS', { BULKORDER_REMOTE_ID_FIELDS: 'orderId,,id' }],
];
type LoadOptions = { confirmProduction?: boolean };

describe('refused configurations', () => {
  it.each(REFUSALS)('names %s', (variable, env, options) => {
    const error = refusal(() => loadConfig({ env, ...options }));
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
    expect(error.exitCode).toBe(ExitCode.usage);
  });

  it('never repeats a refused secret in the message', () => {
    const error = refusal(() =>
      loadConfig({ env: { BULKORDER_BUSINESS_CLIENT_SECRET: 'x'.repeat(1001) + 'canary-secret' } }),
    );
    expect(error.variable).toBe('BULKORDER_BUSINESS_CLIENT_SECRET');
    expect(error.message).not.toContain('canary-secret');
  });
});

describe('requireApi', () => {
  const cases: Array<[string, Record<string, string>, 'business' | 'cafetariaplan']> = [
    ['BULKORDER_BASE_URL', { ...COMPLETE, BULKORDER_BASE_URL: '' }, 'business'],
    ['BULKORDER_USER_AGENT', { ...COMPLETE, BULKORDER_USER_AGENT: '' }, 'business'],
    [
      'BULKORDER_BUSINESS_CLIENT_ID',
      { ...COMPLETE, BULKORDER_BUSINESS_CLIENT_ID: '', BULKORDER_BUSINESS_CLIENT_SECRET: '' },
      'business',
    ],
    ['BULKORDER_CAFETARIAPLAN_CLIENT_ID', COMPLETE, 'cafetariaplan'],
  ];
  it.each(cases)('names the missing %s', (variable, env, api) => {
    const config: Config = loadConfig({ env });
    expect(refusal(() => requireApi(config, api)).variable).toBe(variable);
  });
});

describe('.env.example', () => {
  it('documents every variable src/config.ts reads, and loads as it stands', async () => {
    const path = join(projectRoot, '.env.example');
    const text = await readFile(path, 'utf8');
    const missing = CONFIG_VARIABLES.filter((name) => !new RegExp(`^${name}=`, 'm').test(text));
    expect(missing).toEqual([]);
    const twice = CONFIG_VARIABLES.filter((name) => (text.match(new RegExp(`^${name}=`, 'gm')) ?? []).length > 1);
    expect(twice).toEqual([]); // each variable set once: a second line silently wins
    expect(loadConfig({ env: {}, envFile: path }).env).toBe('acceptance');
  });
});
