/**
 * Which addresses a webhook may not reach (server-side request forgery): loopback, link-local,
 * private networks, cloud metadata endpoints and other non-public ranges, unless the operator
 * allows them (BULKORDER_NOTIFY_ALLOW_PRIVATE). Pure: the notifier asks again at send time, for
 * every address a name resolves to (src/notify/notifier.ts), and the configuration at load, for
 * IP literals and the names that always point inside.
 */
import { BlockList, isIP } from 'node:net';

/** What BULKORDER_NOTIFY_ALLOW_PRIVATE allows: host names, networks, or any non-public address but cloud metadata. */
export interface PrivateAllowance {
  /** `*`: every private, loopback and link-local address; cloud metadata addresses only when listed themselves. */
  readonly any: boolean;
  /** Host names (lower case) whose addresses may be private. */
  readonly hosts: readonly string[];
  /** Networks (`10.1.0.0/16`, `fd00::/8`, or one address) a webhook may reach. */
  readonly networks: readonly string[];
}

export const NO_PRIVATE: PrivateAllowance = { any: false, hosts: [], networks: [] };

/** Cloud instance metadata services (AWS, GCP, Azure, Oracle: 169.254.169.254; AWS ECS; Alibaba; AWS over IPv6). */
const METADATA_ADDRESSES = ['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254'];
/** Names that always point at the machine itself or its metadata service. */
const INSIDE_NAMES =
  /^(localhost|.*\.localhost|metadata|metadata\.google\.internal|metadata\.goog|instance-data(\.ec2\.internal)?)\.?$/;

const RANGES: readonly (readonly [kind: string, network: string, prefix: number, family: 'ipv4' | 'ipv6'])[] = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['carrier-grade NAT', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['benchmarking', '198.18.0.0', 15, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['discard', '100::', 64, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['site-local', 'fec0::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];

const blocks = RANGES.map(([kind, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, list };
});

/**
 * An IPv4 address an IPv6 one carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`): it reaches that IPv4 address, so it is judged as that.
 */
function embeddedIpv4(ip: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped !== null) return mapped[1];
  const words = expandIpv6(ip);
  if (words === undefined) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return v4(words[6], words[7]);
  // IPv4-compatible (`::a.b.c.d`, deprecated), but not `::` and `::1` themselves.
  if (words.slice(0, 6).every((w) => w === 0) && (words[6] !== 0 || words[7] > 1)) return v4(words[6], words[7]);
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0))
    return v4(words[6], words[7]);
  if (words[0] === 0x2002) return v4(words[1], words[2]);
  return undefined;
}

/** The eight words of an IPv6 address. */
type Words = [number, number, number, number, number, number, number, number];

/** True when `words` are eight 16-bit words. */
function isWords(words: number[]): words is Words {
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff);
}

/** The eight 16-bit words of an IPv6 address (a dotted IPv4 tail included), or undefined. */
function expandIpv6(ip: string): Words | undefined {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail !== null) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s === undefined || s === '' ? [] : s.split(':'));
  const left = part(head);
  const right = part(rest);
  const fill = rest === undefined ? 0 : 8 - left.length - right.length;
  const words = [...left, ...Array<string>(Math.max(fill, 0)).fill('0'), ...right].map((w) => parseInt(w, 16));
  return isWords(words) ? words : undefined;
}

/** What kind of non-public address `ip` is (`loopback`, `private`, `cloud metadata`, ...), or undefined for a public one. */
export function nonPublicKind(ip: string): string | undefined {
  const family = isIP(ip);
  if (family === 0) return undefined;
  const v4 = family === 6 ? embeddedIpv4(ip) : ip;
  if (v4 !== undefined && v4 !== ip) return nonPublicKind(v4);
  if (METADATA_ADDRESSES.some((address) => sameAddress(address, ip))) return 'cloud metadata';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return blocks.find(({ list }) => list.check(ip, type))?.kind;
}

function sameAddress(a: string, b: string): boolean {
  if (isIP(a) !== isIP(b)) return false;
  const list = new BlockList();
  list.addAddress(a, isIP(a) === 4 ? 'ipv4' : 'ipv6');
  return list.check(b, isIP(b) === 4 ? 'ipv4' : 'ipv6');
}

/** Whether the allowance lets a webhook of host `host` reach address `ip`. */
function allowed(host: string, ip: string, kind: string, allowance: PrivateAllowance): boolean {
  const inListed = allowance.networks.some((network) => {
    const [address, bits] = network.split('/') as [string, string | undefined];
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (isIP(ip) !== isIP(address)) return false;
    const list = new BlockList();
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
    return list.check(ip, family);
  });
  if (inListed) return true;
  if (kind === 'cloud metadata') return false; // only by its own address: never by `*` or a name
  return allowance.any || allowance.hosts.includes(host.toLowerCase().replace(/\.$/, ''));
}

/**
 * Why a webhook of host `host` may not reach `ip`, or undefined. The sentence names the address's
 * kind and the setting that allows it.
 */
export function addressProblem(host: string, ip: string, allowance: PrivateAllowance): string | undefined {
  const kind = nonPublicKind(ip);
  if (kind === undefined || allowed(host, ip, kind, allowance)) return undefined;
  const via = host === ip ? '' : ` (${host} resolves to it)`;
  return kind === 'cloud metadata'
    ? `${ip}${via} is a cloud metadata address; a webhook may reach it only when BULKORDER_NOTIFY_ALLOW_PRIVATE lists ${ip} itself`
    : `${ip}${via} is a ${kind} address; webhooks go to public addresses unless BULKORDER_NOTIFY_ALLOW_PRIVATE allows it (${host === ip ? ip : host}, a network such as 10.0.0.0/8, or *)`;
}

/**
 * What can be told of a webhook host without DNS (at configuration load): an IP literal, or a name
 * that always points inside (localhost, metadata.google.internal). Other names are checked at
 * every send, address by address.
 */
export function hostProblem(hostname: string, allowance: PrivateAllowance): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host) !== 0) return addressProblem(host, host, allowance);
  if (INSIDE_NAMES.test(host) && !allowance.any && !allowance.hosts.includes(host.replace(/\.$/, '')))
    return `${host} points at this machine or its metadata service; webhooks go to public addresses unless BULKORDER_NOTIFY_ALLOW_PRIVATE allows it (${host}, or *)`;
  return undefined;
}

/** The allowance as BULKORDER_NOTIFY_ALLOW_PRIVATE writes it (what `bulkorder config` prints). */
export function allowanceText(allowance: PrivateAllowance): string {
  const items = [...(allowance.any ? ['*'] : []), ...allowance.hosts, ...allowance.networks];
  return items.length === 0 ? 'none' : items.join(',');
}

/** Whether a parsed setting is an allowance (for printing the configuration). */
export function isAllowance(value: unknown): value is PrivateAllowance {
  return typeof value === 'object' && value !== null && 'any' in value && 'hosts' in value && 'networks' in value;
}

/** Parses BULKORDER_NOTIFY_ALLOW_PRIVATE: `none`, `*`, or host names, addresses and networks, comma-separated. */
export function parseAllowance(value: string): { allowance: PrivateAllowance } | { problem: string } {
  const items = value
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '' && item !== 'none');
  const hosts: string[] = [];
  const networks: string[] = [];
  let any = false;
  for (const item of items) {
    if (item === '*') {
      any = true;
      continue;
    }
    const [address, bits, extra] = item.replace(/^\[|\]$/g, '').split('/');
    if (address !== undefined && isIP(address) !== 0) {
      const max = isIP(address) === 4 ? 32 : 128;
      if (extra !== undefined || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= max)))
        return { problem: `'${item}' is not a network: give an address or address/prefix (10.0.0.0/8, fd00::/8)` };
      networks.push(bits === undefined ? address : `${address}/${bits}`);
      continue;
    }
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(item))
      return { problem: `'${item}' is neither a host name, an address nor a network (10.0.0.0/8)` };
    hosts.push(item);
  }
  return { allowance: { any, hosts, networks } };
}
