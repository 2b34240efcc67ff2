/**
 * Issue 37, item 7: a webhook must not become a way into the machine or its network (SSRF).
 * Loopback, link-local, private and cloud metadata addresses are refused at load (IP literals,
 * localhost and metadata names) and at every send (each address a name resolves to, checked by
 * the lookup the connection itself uses), unless BULKORDER_NOTIFY_ALLOW_PRIVATE allows them;
 * redirects are never followed. The receivers are real HTTP servers on loopback.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, Secret } from '../../src/config.js';
import {
  hostProblem,
  nonPublicKind,
  NO_PRIVATE,
  parseAllowance,
  type PrivateAllowance,
} from '../../src/config/privateAddress.js';
import { createLogger } from '../../src/logger.js';
import { createNotifier } from '../../src/notify/notifier.js';
import type { NotifyEvent } from '../../src/notify/notifyEvent.js';
import { recordReliability } from '../helpers/reliabilityLog.js';
import { runCli } from '../helpers/runCli.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A receiver on loopback answering `status` (and `headers`), counting the requests it got. */
async function receiver(status = 204, headers: Record<string, string> = {}) {
  const got: string[] = [];
  const server = createServer((req, res) => {
    got.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(status, headers).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { port: (server.address() as AddressInfo).port, got };
}

/** A resolver answering `addresses` for every name: what DNS would say (the lookup is the one thing injected). */
function answering(addresses: string[]): typeof dnsLookup {
  return ((_host: string, _options: unknown, callback: (e: Error | null, a: LookupAddress[]) => void) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )) as unknown as typeof dnsLookup;
}

const EVENT: NotifyEvent = {
  id: 'batch-settled:b-1',
  event: 'batch-settled',
  env: 'acceptance',
  text: 'Batch b-1 settled.',
  at: new Date().toISOString(),
};

/** Sends one event to `url` and returns the log lines. */
async function send(url: string, allowPrivate: PrivateAllowance, lookup: typeof dnsLookup): Promise<string> {
  let log = '';
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk: Buffer, _e, done) {
        log += chunk.toString();
        done();
      },
    }),
  });
  const notifier = createNotifier({ urls: [new Secret(url)], timeoutMs: 2000, allowPrivate, smtp: undefined }, logger, {
    lookup,
  });
  await notifier.notify(EVENT);
  notifier.close();
  return log;
}

describe('which addresses are not public', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.170.2', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['8.8.8.8', undefined],
    ['172.32.0.1', undefined],
    ['2a00:1450:4001::1', undefined],
  ])('%s: %s', (ip, kind) => {
    expect(nonPublicKind(ip)).toBe(kind);
  });

  it('BULKORDER_NOTIFY_ALLOW_PRIVATE: names, networks and *, never metadata by * or a name', () => {
    const allow = (value: string) => {
      const parsed = parseAllowance(value);
      if ('problem' in parsed) throw new Error(parsed.problem);
      return parsed.allowance;
    };
    expect(hostProblem('10.1.2.3', NO_PRIVATE)).toMatch(/private address.*BULKORDER_NOTIFY_ALLOW_PRIVATE/);
    expect(hostProblem('10.1.2.3', allow('10.0.0.0/8'))).toBeUndefined();
    expect(hostProblem('10.1.2.3', allow('10.1.3.0/24'))).toMatch(/private address/);
    expect(hostProblem('127.0.0.1', allow('*'))).toBeUndefined();
    expect(hostProblem('169.254.169.254', allow('*'))).toMatch(/cloud metadata/);
    expect(hostProblem('169.254.169.254', allow('169.254.169.254'))).toBeUndefined();
    expect(hostProblem('[fe80::1]', NO_PRIVATE)).toMatch(/link-local/);
    expect(hostProblem('localhost', NO_PRIVATE)).toMatch(/points at this machine/);
    expect(hostProblem('metadata.google.internal', NO_PRIVATE)).toMatch(/metadata service/);
    expect(hostProblem('localhost', allow('localhost'))).toBeUndefined();
    expect(hostProblem('hooks.slack.com', NO_PRIVATE)).toBeUndefined();
    expect(parseAllowance('10.0.0.0/33')).toMatchObject({ problem: expect.stringMatching(/not a network/) });
    expect(parseAllowance('ex ample')).toMatchObject({ problem: expect.stringMatching(/neither a host name/) });
  });
});

describe('webhook URLs to non-public addresses', () => {
  it('are refused at load: loopback (a Redis port), metadata, private and link-local, each naming the setting', async () => {
    const refused: Record<string, RegExp> = {
      'http://127.0.0.1:6379/': /URL 1: 127\.0\.0\.1 is a loopback address/,
      'https://169.254.169.254/latest/meta-data': /cloud metadata/,
      'https://10.20.30.40/hook': /10\.20\.30\.40 is a private address/,
      'https://[fe80::1]/hook': /link-local/,
      'https://[::ffff:127.0.0.1]/hook': /loopback/,
      'https://metadata.google.internal/computeMetadata/v1/': /metadata service/,
      'slack:https://192.168.1.10/services/T/B/X': /private address/,
    };
    for (const [url, reason] of Object.entries(refused)) {
      expect(() => loadConfig({ env: { BULKORDER_NOTIFY_URLS: url } }), url).toThrow(reason);
      expect(() => loadConfig({ env: { BULKORDER_NOTIFY_URLS: url } }), url).toThrow(/BULKORDER_NOTIFY_ALLOW_PRIVATE/);
    }
    // The setting allows what it names; metadata only by its own address.
    expect(
      loadConfig({
        env: { BULKORDER_NOTIFY_URLS: 'https://10.20.30.40/hook', BULKORDER_NOTIFY_ALLOW_PRIVATE: '10.0.0.0/8' },
      }).notify.urls,
    ).toHaveLength(1);
    expect(() =>
      loadConfig({
        env: { BULKORDER_NOTIFY_URLS: 'https://169.254.169.254/', BULKORDER_NOTIFY_ALLOW_PRIVATE: '*' },
      }),
    ).toThrow(/cloud metadata/);
    // The real CLI: exit 2 naming the variable, the URL itself not echoed.
    const cli = await runCli(['config'], { BULKORDER_NOTIFY_URLS: 'http://127.0.0.1:6379/secret-path' });
    expect(cli.code).toBe(2);
    expect(cli.output).toMatch(/BULKORDER_NOTIFY_URLS: URL 1: 127\.0\.0\.1 is a loopback address/);
    expect(cli.output).not.toContain('secret-path');
    const printed = await runCli(['config'], { BULKORDER_NOTIFY_ALLOW_PRIVATE: 'hooks.corp.example, 10.0.0.0/8' });
    expect(printed.output).toMatch(/BULKORDER_NOTIFY_ALLOW_PRIVATE\s+hooks\.corp\.example,10\.0\.0\.0\/8/);
  });

  it('are refused at send time when a name resolves to one (DNS rebinding), and reached only when allowed', async () => {
    const hook = await receiver();
    const url = `http://hooks.rebind.test:${hook.port}/hook`;
    // The name passed the load check (a name is not resolved then); now it resolves to loopback.
    const refusedLog = await send(url, NO_PRIVATE, answering(['127.0.0.1']));
    expect(hook.got).toEqual([]);
    expect(refusedLog).toMatch(
      /not sent: WEBHOOK_ADDRESS_REFUSED: 127\.0\.0\.1 \(hooks\.rebind\.test resolves to it\) is a loopback address/,
    );
    // One private address among public ones is enough to refuse.
    const mixedLog = await send(url, NO_PRIVATE, answering(['93.184.215.14', '10.0.0.7']));
    expect(mixedLog).toMatch(/10\.0\.0\.7 \(hooks\.rebind\.test resolves to it\) is a private address/);
    expect(hook.got).toEqual([]);
    // Allowed by name: sent, to the address the checked lookup gave (the connection uses that one).
    const allowedLog = await send(
      url,
      { any: false, hosts: ['hooks.rebind.test'], networks: [] },
      answering(['127.0.0.1']),
    );
    expect(allowedLog).toMatch(/notification sent/);
    expect(hook.got).toEqual(['/hook']);
    // An address literal is judged without a lookup.
    const literalLog = await send(`http://127.0.0.1:${hook.port}/literal`, NO_PRIVATE, answering([]));
    expect(literalLog).toMatch(/not sent: WEBHOOK_ADDRESS_REFUSED: 127\.0\.0\.1 is a loopback address/);
    expect(hook.got).toEqual(['/hook']);
  });

  it('never follows a redirect (to cloud metadata or anywhere)', async () => {
    const hook = await receiver(302, { location: 'http://169.254.169.254/latest/meta-data/' });
    const log = await send(
      `http://127.0.0.1:${hook.port}/hook`,
      { any: false, hosts: [], networks: ['127.0.0.1'] },
      answering([]),
    );
    expect(hook.got).toEqual(['/hook']);
    expect(log).toMatch(/HTTP 302: a redirect, not followed/);
    recordReliability({
      fault:
        'webhook URLs to loopback (a Redis port), cloud metadata, private and link-local addresses; a name rebound to 127.0.0.1; a 302 to metadata',
      behaviour:
        'refused at load (exit 2 naming BULKORDER_NOTIFY_ALLOW_PRIVATE) and at send (the lookup the connection uses checks every address); the redirect not followed; allowed only where the setting names them',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  });
});
