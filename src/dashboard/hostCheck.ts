import { isIP } from 'node:net';

/**
 * Which Host headers the dashboard answers to, against DNS rebinding: a page of another site
 * whose name now resolves to 127.0.0.1 sends its own name as Host, and is answered 421 (as Vite's
 * and webpack's development servers do). Allowed: loopback names and addresses (localhost,
 * *.localhost, 127.x.x.x, [::1]), the address the dashboard listens on when it is a specific one,
 * BULKORDER_DASHBOARD_URL's host, and BULKORDER_DASHBOARD_HOSTS (names, `*.domain`, or `*` for
 * any: behind a proxy that checks Host itself). The port is not compared.
 */
export class HostCheck {
  private readonly names: ReadonlySet<string>;
  private readonly suffixes: readonly string[];
  private readonly any: boolean;

  constructor(options: { listenHost: string; publicUrl: string | undefined; hosts: readonly string[] }) {
    const names = new Set<string>();
    const suffixes = ['.localhost'];
    if (options.listenHost !== '0.0.0.0' && options.listenHost !== '::') names.add(bare(options.listenHost));
    if (options.publicUrl !== undefined) names.add(bare(new URL(options.publicUrl).hostname));
    for (const host of options.hosts) {
      if (host.startsWith('*.')) suffixes.push(host.slice(1).toLowerCase());
      else names.add(bare(host));
    }
    this.names = names;
    this.suffixes = suffixes;
    this.any = options.hosts.includes('*');
  }

  /** True when a request with this Host header may be answered. A request without one (HTTP/1.0) is refused. */
  allows(hostHeader: string | undefined): boolean {
    if (this.any) return true;
    if (hostHeader === undefined || hostHeader === '') return false;
    const host = hostOf(hostHeader);
    if (host === undefined) return false;
    if (host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'))) return true;
    return this.names.has(host) || this.suffixes.some((suffix) => host.endsWith(suffix));
  }
}

/** `Example.com:8080` -> `example.com`; `[::1]:80` -> `::1`; undefined when it is not a host. */
function hostOf(header: string): string | undefined {
  if (/[@/\\?#\s]/.test(header)) return undefined; // user info or a path would let the URL parser pick another host
  try {
    return bare(new URL(`http://${header}`).hostname);
  } catch {
    return undefined;
  }
}

function bare(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}
