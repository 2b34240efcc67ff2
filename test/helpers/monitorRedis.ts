import { once } from 'node:events';
import { connect } from 'node:net';

/** A MONITOR feed of Redis, on a socket of its own; `close()` ends it at once. */
export interface RedisMonitor {
  close(): void;
}

/**
 * Calls `onCommand` with the arguments of every command Redis runs (scripts' calls too), from MONITOR on a plain
 * socket. Not ioredis's monitor(): it takes MONITOR's lines for replies, and throws an uncaught "Command queue state
 * error", when they come in the same read as MONITOR's OK (a busy Redis: another test file's traffic).
 */
export async function monitorRedis(url: string, onCommand: (args: string[]) => void): Promise<RedisMonitor> {
  const { hostname, port, username, password } = new URL(url);
  const socket = connect(Number(port || 6379), hostname);
  socket.setEncoding('utf8');
  let oks = password ? 2 : 1;
  let buffer = '';
  const monitoring = new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (line.startsWith('-')) reject(new Error(`MONITOR: ${line.slice(1)}`));
        else if (oks > 0 && line === '+OK') {
          if (--oks === 0) resolve();
        } else onCommand([...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => unquote(match[1]!)));
      }
    });
  });
  await once(socket, 'connect');
  const auth = username ? [decodeURIComponent(username), decodeURIComponent(password)] : [decodeURIComponent(password)];
  if (password) socket.write(command(['AUTH', ...auth]));
  socket.write(command(['MONITOR']));
  await monitoring;
  return { close: () => socket.destroy() };
}

/** A command in RESP. */
function command(args: string[]): string {
  return `*${args.length}\r\n` + args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('');
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', a: '\x07' };

/** An argument as MONITOR quotes it (Redis's sdscatrepr), back to its text. */
function unquote(quoted: string): string {
  return quoted.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, escape: string) =>
    escape.length === 3 ? String.fromCharCode(parseInt(escape.slice(1), 16)) : (ESCAPES[escape] ?? escape),
  );
}
