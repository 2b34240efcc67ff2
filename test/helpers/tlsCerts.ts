import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PEM files made by `openssl` in a test's folder: a CA and certificates it signed. */
export interface TestCertificates {
  /** The CA's certificate (what BULKORDER_REDIS_TLS_CA names). */
  ca: string;
  /** A server certificate for 127.0.0.1 and localhost, and its key. */
  server: { cert: string; key: string };
  /** A server certificate for another host (other.example) only. */
  otherHost: { cert: string; key: string };
  /** A server certificate for 127.0.0.1 that expired in 2020. */
  expired: { cert: string; key: string };
  /** A client certificate whose key is encrypted with `passphrase`. */
  client: { cert: string; key: string; passphrase: string };
}

/** Makes the certificates with openssl (a real CA, as an operator would): nothing is mocked. */
export async function makeCertificates(dir: string, passphrase: string): Promise<TestCertificates> {
  const path = (name: string) => join(dir, name);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.pem'),
    '-days',
    '30',
    '-subj',
    '/CN=bulkorder test CA',
  ]);
  // `openssl ca` sets any validity period (an expired one too) and copies the extensions given.
  await writeFile(path('index.txt'), '');
  await writeFile(path('serial'), '1000\n');
  await writeFile(
    path('ca.cnf'),
    [
      '[ ca ]',
      'default_ca = test_ca',
      '[ test_ca ]',
      `database = ${path('index.txt')}`,
      `new_certs_dir = ${dir}`,
      `serial = ${path('serial')}`,
      'default_md = sha256',
      'policy = any',
      'unique_subject = no',
      '[ any ]',
      'commonName = supplied',
    ].join('\n') + '\n',
  );
  const sign = async (
    name: string,
    subjectAltName: string | undefined,
    validity: { start: string; end: string },
    keyArgs: string[] = ['-nodes'],
  ): Promise<{ cert: string; key: string }> => {
    await run('openssl', [
      'req',
      '-newkey',
      'rsa:2048',
      ...keyArgs,
      '-keyout',
      path(`${name}.key`),
      '-out',
      path(`${name}.csr`),
      '-subj',
      `/CN=${name}`,
    ]);
    const extensions = path(`${name}.ext`);
    await writeFile(
      extensions,
      `[ v3 ]\nbasicConstraints = CA:FALSE\n${subjectAltName === undefined ? '' : `subjectAltName = ${subjectAltName}\n`}`,
    );
    await run('openssl', [
      'ca',
      '-batch',
      '-notext',
      '-config',
      path('ca.cnf'),
      '-cert',
      path('ca.pem'),
      '-keyfile',
      path('ca.key'),
      '-in',
      path(`${name}.csr`),
      '-out',
      path(`${name}.pem`),
      '-startdate',
      validity.start,
      '-enddate',
      validity.end,
      '-extfile',
      extensions,
      '-extensions',
      'v3',
    ]);
    return { cert: path(`${name}.pem`), key: path(`${name}.key`) };
  };
  const now = new Date();
  const stamp = (date: Date) => `${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
  const valid = {
    start: stamp(new Date(now.getTime() - 3600_000)),
    end: stamp(new Date(now.getTime() + 30 * 86400_000)),
  };
  return {
    ca: path('ca.pem'),
    server: await sign('server', 'IP:127.0.0.1,DNS:localhost', valid),
    otherHost: await sign('other', 'DNS:other.example', valid),
    expired: await sign('expired', 'IP:127.0.0.1,DNS:localhost', { start: '20200101000000Z', end: '20200201000000Z' }),
    client: {
      ...(await sign('client', undefined, valid, ['-passout', `pass:${passphrase}`])),
      passphrase,
    },
  };
}
