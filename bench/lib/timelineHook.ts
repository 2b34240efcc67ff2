/**
 * Preloaded (`node --import`) into the processes bench/timeline.ts watches: writes a timestamped
 * line per event to BENCH_TIMELINE_FILE (JSON lines, epoch milliseconds, one clock for every
 * process), without any change to the code under test:
 * - `start`: the process's time origin, and `hook` (Node's own bootstrap done, this file loaded);
 * - `redis`: every command written to a socket (RESP parsed: the command, and for EVALSHA its SHA-1
 *   and first key; for other commands the first argument), so reserve, addBulk, the follow loop's
 *   reads and the results file's reads are seen from the process that sends them;
 * - `post` and `answer`: each undici request (method, path) and its response headers;
 * - `write`: the first bytes written to a file stream, and `closed` when it closes;
 * - `exit`: the process's `exit` event.
 * Lines are kept in memory and written synchronously at exit (no timing noise meanwhile).
 */
import { createHash } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const target = process.env.BENCH_TIMELINE_FILE;
if (target !== undefined && target !== '') {
  const lines: string[] = [];
  const now = (): number => performance.timeOrigin + performance.now();
  const note = (ev: string, detail: Record<string, unknown> = {}): void => {
    lines.push(JSON.stringify({ t: now(), pid: process.pid, ev, ...detail }));
  };
  lines.push(JSON.stringify({ t: performance.timeOrigin, pid: process.pid, ev: 'start', argv: process.argv.slice(2) }));
  note('hook');

  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (this: net.Socket, chunk: unknown, ...rest: unknown[]): boolean {
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) {
      // RESP lengths count bytes: one char per byte.
      // Only the start of a large write is read (a pipeline of one kind of command): the hook stays cheap.
      const head = Buffer.isBuffer(chunk) ? chunk.subarray(0, 65_536) : Buffer.from(chunk.slice(0, 65_536));
      const text = head.toString('latin1');
      if (text.startsWith('*')) for (const command of respCommands(text)) note('redis', command);
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  };

  const request = new WeakMap<object, string>();
  subscribe('undici:request:create', (message) => {
    const { request: r } = message as { request: { method: string; path: string } };
    const what = `${r.method} ${r.path.replace(/\?.*$/, '')}`;
    request.set(r, what);
    note('post', { what });
  });
  subscribe('undici:request:headers', (message) => {
    const { request: r, response } = message as { request: object; response: { statusCode: number } };
    note('answer', { what: request.get(r), status: response.statusCode });
  });

  const createWriteStream = fs.createWriteStream;
  fs.createWriteStream = function (path: fs.PathLike, ...rest: unknown[]) {
    const stream = (createWriteStream as (...args: unknown[]) => fs.WriteStream)(path, ...rest);
    const name = String(path);
    stream.once('open', () => note('write', { path: name }));
    stream.once('close', () => note('closed', { path: name }));
    return stream;
  };
  syncBuiltinESMExports(); // `import { createWriteStream } from 'node:fs'` sees the wrapper too

  process.on('exit', () => {
    const cpu = process.cpuUsage();
    note('exit', { cpuMs: (cpu.user + cpu.system) / 1000 });
    writeFileSync(target, lines.join('\n') + '\n', { flag: 'a' });
  });
}

/** The commands in one socket write (ioredis writes whole commands, a pipeline several at once). */
function respCommands(text: string): { cmd: string; arg?: string | undefined; key?: string | undefined }[] {
  const out: { cmd: string; arg?: string | undefined; key?: string | undefined }[] = [];
  let at = 0;
  while (at < text.length && text[at] === '*') {
    const end = text.indexOf('\r\n', at);
    if (end < 0) break;
    const count = Number(text.slice(at + 1, end));
    at = end + 2;
    const args: string[] = [];
    for (let i = 0; i < count; i++) {
      const lenEnd = text.indexOf('\r\n', at);
      if (lenEnd < 0 || text[at] !== '$') return out;
      const len = Number(text.slice(at + 1, lenEnd));
      const arg = text.slice(lenEnd + 2, lenEnd + 2 + len);
      // EVAL sends the script itself: named by its SHA-1, as EVALSHA names it.
      if (i < 4) args.push(i === 1 && /^eval$/i.test(args[0] ?? '') ? sha1(arg) : arg.slice(0, 120));
      at = lenEnd + 2 + len + 2;
    }
    const cmd = (args[0] ?? '').toUpperCase();
    out.push(cmd === 'EVALSHA' || cmd === 'EVAL' ? { cmd, arg: args[1], key: args[3] } : { cmd, arg: args[1] });
  }
  return out;
}

function sha1(latin1: string): string {
  return createHash('sha1').update(Buffer.from(latin1, 'latin1')).digest('hex');
}
