/**
 * Issue 37, item 7: a TLS Redis (redis-server --tls-port, with certificates openssl makes here) whose
 * certificate is not trusted, is another host's or has expired is a TLS error naming what to set,
 * never "Redis does not answer ... docker compose"; with BULKORDER_REDIS_TLS_* it works, client
 * certificate and key passphrase included, and none of the TLS secrets is ever printed.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCli, startCli } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';
import { sparePort, startPrivateRedis, type PrivateRedis } from '../helpers/privateRedis.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { makeCertificates, type TestCertificates } from '../helpers/tlsCerts.js';

const PASSPHRASE = 'canary-tls-passphrase-5c1e';

let dir: string;
let certs: TestCertificates;
const servers: PrivateRedis[] = [];
/** The TLS port of a redis-server presenting `cert`, asking clients for a certificate when `clientAuth`. */
const tlsPorts: Record<string, number> = {};
let plainPort: number;

async function tlsServer(name: string, cert: { cert: string; key: string }, clientAuth: boolean): Promise<void> {
  const port = await sparePort();
  const server = await startPrivateRedis([
    '--appendonly',
    'yes',
    '--maxmemory-policy',
    'noeviction',
    '--tls-port',
    String(port),
    '--tls-cert-file',
    cert.cert,
    '--tls-key-file',
    cert.key,
    '--tls-ca-cert-file',
    certs.ca,
    '--tls-auth-clients',
    clientAuth ? 'yes' : 'no',
  ]);
  servers.push(server);
  tlsPorts[name] = port;
  if (name === 'trusted') plainPort = Number(new URL(server.url).port);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bulkorder-tls-'));
  certs = await makeCertificates(dir, PASSPHRASE);
  await tlsServer('trusted', certs.server, false);
  await tlsServer('mutual', certs.server, true);
  await tlsServer('otherHost', certs.otherHost, false);
  await tlsServer('expired', certs.expired, false);
}, 120_000);

afterAll(async () => {
  await killAllCli();
  await Promise.all(servers.map((server) => server.stop()));
  await rm(dir, { recursive: true, force: true });
});

const BASE = {
  BULKORDER_BASE_URL: 'https://api.acc.vendor.test',
  BULKORDER_USER_AGENT: 'Test-BulkorderTests',
  BULKORDER_BUSINESS_CLIENT_ID: 'c',
  BULKORDER_BUSINESS_CLIENT_SECRET: 's',
  BULKORDER_REDIS_PREFIX: 'bulkorder-test-tls',
  LOG_LEVEL: 'silent',
};

/** `bulkorder status` as a real process: all it writes is seen (a warning, a secret), not only what `main` writes. */
async function status(env: Record<string, string>): Promise<{ code: number | string; output: string }> {
  const cli = startCli(['status'], { ...BASE, ...env });
  return { code: await cli.exited, output: cli.output() };
}

/** `bulkorder status` in this process (test/helpers/runCli.ts), for a refusal: its exit code and the message `main` writes. */
async function refusal(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const run = await runCli(['status'], { ...BASE, ...env });
  return { code: run.code, output: run.output };
}

describe('Redis over TLS', () => {
  it('names an untrusted, wrong-host or expired certificate as a TLS error with what to set; works with the CA', async () => {
    const untrusted = await refusal({ REDIS_URL: `rediss://127.0.0.1:${tlsPorts.trusted}` });
    expect(untrusted.code).toBe(2);
    expect(untrusted.output).toMatch(/TLS error: the server's certificate is not trusted/);
    expect(untrusted.output).toMatch(/Set BULKORDER_REDIS_TLS_CA/);

    const otherHost = await refusal({
      REDIS_URL: `rediss://127.0.0.1:${tlsPorts.otherHost}`,
      BULKORDER_REDIS_TLS_CA: certs.ca,
    });
    expect(otherHost.code).toBe(2);
    expect(otherHost.output).toMatch(/TLS error: the server's certificate is for another host .*other\.example/);

    const expired = await refusal({
      REDIS_URL: `rediss://127.0.0.1:${tlsPorts.expired}`,
      BULKORDER_REDIS_TLS_CA: certs.ca,
    });
    expect(expired.code).toBe(2);
    expect(expired.output).toMatch(/TLS error: the server's certificate has expired/);

    // TLS spoken to a plain port, and plain spoken to a TLS port.
    // (A plain Redis waits for a command and never answers the handshake: all that can be said is what to check.)
    const notTls = await refusal({ REDIS_URL: `rediss://127.0.0.1:${plainPort}`, BULKORDER_REDIS_TLS_CA: certs.ca });
    expect(notTls.code).toBe(5);
    expect(notTls.output).toMatch(/If that port is a plain \(not TLS\) one, use redis:\/\//);
    const plain = await refusal({ REDIS_URL: `redis://127.0.0.1:${tlsPorts.trusted}` });
    expect(plain.code).toBe(5);
    expect(plain.output).toMatch(/If that Redis takes TLS connections only, use rediss:\/\//);

    for (const run of [untrusted, otherHost, expired])
      expect(run.output).not.toMatch(/does not answer|docker compose|internal error/);

    const trusted = await status({
      REDIS_URL: `rediss://127.0.0.1:${tlsPorts.trusted}`,
      BULKORDER_REDIS_TLS_CA: certs.ca,
    });
    expect(trusted.code).toBe(0);
    expect(trusted.output).toMatch(/circuit breaker closed/);
    expect(trusted.output).not.toMatch(/WARNING|error/i);
    recordReliability({
      fault: 'a TLS Redis (redis-server --tls-port) whose certificate is untrusted, for another host or expired',
      behaviour:
        'exit 2 REDIS_TLS saying which and what to set (BULKORDER_REDIS_TLS_CA, a host name the certificate names, a renewed certificate), never "Redis does not answer"; with the CA set it works',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 120_000);

  it('takes a client certificate with an encrypted key; the key and passphrase are never printed', async () => {
    const mutual = { REDIS_URL: `rediss://127.0.0.1:${tlsPorts.mutual}`, BULKORDER_REDIS_TLS_CA: certs.ca };
    const without = await refusal(mutual);
    expect(without.code).toBe(2);
    expect(without.output).toMatch(/TLS error: .*BULKORDER_REDIS_TLS_CERT and BULKORDER_REDIS_TLS_KEY/s);

    const keyPem = await readFile(certs.client.key, 'utf8');
    const inline = {
      ...mutual,
      BULKORDER_REDIS_TLS_CERT: certs.client.cert,
      // An inline key, as a container's environment gives it (line breaks written \n).
      BULKORDER_REDIS_TLS_KEY: keyPem.replace(/\n/g, '\\n'),
      BULKORDER_REDIS_TLS_KEY_PASSPHRASE: PASSPHRASE,
    };
    // Three real processes (every line they write is checked for the secrets), run side by side.
    const config = startCli(['config'], { ...BASE, ...inline });
    const [ok, wrongPassphrase] = await Promise.all([
      status({ ...inline, LOG_LEVEL: 'debug' }),
      status({ ...inline, BULKORDER_REDIS_TLS_KEY_PASSPHRASE: 'not-the-passphrase' }),
    ]);
    expect(ok.code).toBe(0);
    expect(wrongPassphrase.code).not.toBe(0);
    expect(await config.exited).toBe(0);
    expect(config.output()).toMatch(/BULKORDER_REDIS_TLS_KEY\s+\(inline PEM\)/);
    expect(config.output()).toMatch(/BULKORDER_REDIS_TLS_KEY_PASSPHRASE\s+\*{8}/);
    expect(config.output()).toContain(certs.client.cert);
    const keyBody = keyPem.split('\n')[1]!;
    for (const output of [ok.output, wrongPassphrase.output, without.output, config.output()]) {
      expect(output).not.toContain(PASSPHRASE);
      expect(output).not.toContain(keyBody);
    }
  }, 120_000);

  it('refuses TLS files with a redis:// URL, and a certificate without its key', async () => {
    const plainUrl = await refusal({ REDIS_URL: `redis://127.0.0.1:${plainPort}`, BULKORDER_REDIS_TLS_CA: certs.ca });
    expect(plainUrl.code).toBe(2);
    expect(plainUrl.output).toMatch(/REDIS_URL: BULKORDER_REDIS_TLS_\* is set but REDIS_URL is not rediss:\/\//);
    const halfPair = await refusal({
      REDIS_URL: `rediss://127.0.0.1:${tlsPorts.mutual}`,
      BULKORDER_REDIS_TLS_CERT: certs.client.cert,
    });
    expect(halfPair.code).toBe(2);
    expect(halfPair.output).toMatch(/BULKORDER_REDIS_TLS_KEY: a client certificate needs both/);
    const missing = await refusal({
      REDIS_URL: `rediss://127.0.0.1:${tlsPorts.trusted}`,
      BULKORDER_REDIS_TLS_CA: join(dir, 'nope.pem'),
    });
    expect(missing.code).toBe(2);
    expect(missing.output).toMatch(/BULKORDER_REDIS_TLS_CA: cannot read .*nope\.pem \(ENOENT\)/);
  }, 60_000);
});
