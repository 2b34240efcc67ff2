/**
 * Who issues each Redis command (bench/commandBreakdown.ts): INFO commandstats counts commands by
 * name only, with the commands run inside Lua scripts folded in. MONITOR shows every command, a
 * script's own calls right after its EVAL/EVALSHA (source `lua`), so each one is charged to the
 * script that ran it, named from the scripts the caller knows (BullMQ's, the ledger's, the breaker's).
 * MONITOR slows Redis down: counts only, never rates.
 */
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { defineScripts } from '../../src/lua/defineScripts.js';
import { ORDERS_QUEUE } from '../../src/queues.js';

/** A script's name by the SHA-1 of its text (what EVALSHA sends; EVAL sends the text itself). */
export type ScriptNames = Map<string, string>;

/**
 * Names every script defined on an ioredis client (BullMQ's and the ledger's, by command name), plus
 * `extra` texts by name for scripts no client has defined yet; a client's name wins for the same text.
 */
function scriptNames(clients: readonly Redis[], extra: Record<string, string> = {}): ScriptNames {
  const names: ScriptNames = new Map();
  for (const client of clients) {
    const set = (client as unknown as { scriptsSet: Record<string, { sha: string }> }).scriptsSet;
    for (const [name, script] of Object.entries(set)) names.set(script.sha, name.replace(/:\d+\.\d+\.\d+$/, ''));
  }
  for (const [name, lua] of Object.entries(extra)) {
    const sha = createHash('sha1').update(lua).digest('hex');
    if (!names.has(sha)) names.set(sha, name);
  }
  return names;
}

/** The escapes MONITOR writes (Redis's sdscatrepr) besides \", which ioredis undoes itself. */
const ESCAPES: Record<string, number> = { n: 10, r: 13, t: 9, a: 7, b: 8, '\\': 92, '"': 34 };

/**
 * An argument as it was sent: MONITOR quotes each one (`\n`, `\xHH` for every byte not printable),
 * so a script sent by EVAL (ioredis does on NOSCRIPT, BullMQ on first use) must be unquoted before
 * its SHA-1 names it.
 */
function unquoteMonitorArg(arg: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < arg.length; i++) {
    const code = arg.charCodeAt(i);
    const next = arg[i + 1];
    if (code !== 92 || next === undefined) bytes.push(code);
    else if (next === 'x') {
      bytes.push(parseInt(arg.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes);
}

/** One line of MONITOR: the command's arguments as sent, and where it came from (`lua` inside a script). */
interface MonitorLine {
  args: string[];
  source: string;
}

/**
 * MONITOR on a plain socket of its own. ioredis 6's `monitor()` sets its connection's "monitoring"
 * state only once MONITOR's OK has been handled, a microtask later; on a busy Redis the first
 * watched commands arrive in the same read as the OK and ioredis throws "Command queue state error"
 * (uncaught, in its socket handler). A MONITOR line is a simple string (`+<time> [<db> <source>] "arg" ...`),
 * so lines split on CRLF are all it takes. Emits `monitor` per line once the OK has come.
 */
async function monitorSocket(client: Redis): Promise<Socket> {
  const { host = '127.0.0.1', port = 6379, username, password } = client.options;
  const socket = connect({ host, port });
  if (password !== undefined && password !== null)
    socket.write(username ? `AUTH ${username} ${password}\r\n` : `AUTH ${password}\r\n`);
  socket.write('MONITOR\r\n');
  socket.setEncoding('latin1');
  let rest = '';
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('Redis closed the MONITOR connection before its OK')));
    socket.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\r\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '+OK') {
          resolve();
          continue;
        }
        if (line.startsWith('-')) {
          reject(new Error(`MONITOR refused: ${line.slice(1)}`));
          continue;
        }
        // `+1796040431.109462 [0 127.0.0.1:36296] "bzpopmin" "key" "5"`, quoted as ioredis reads it
        const argIndex = line.indexOf('"');
        const source = line.slice(line.indexOf('[') + 1, argIndex - 2).split(' ')[1] ?? '';
        const args = line
          .slice(argIndex + 1, -1)
          .split('" "')
          .map((arg) => arg.replace(/\\"/g, '"'));
        socket.emit('monitor', { args, source } satisfies MonitorLine);
      }
    });
  });
  return socket;
}

export interface CommandMonitor {
  /** Stops watching; calls per `caller > COMMAND key-shape`, largest first. */
  stop(): Promise<[string, number][]>;
}

/**
 * Starts MONITOR on a connection of its own (ioredis makes it from `client`). `prefix` is cut from key names and the rest of each
 * key is reduced to its shape (`ledger:*`, `orders:wait`), so one row stands for one kind of work.
 */
export async function monitorCommands(client: Redis, names: ScriptNames, prefix: string): Promise<CommandMonitor> {
  const monitor = await monitorSocket(client);
  let failure: Error | undefined; // the connection lost while watching: counts cut short, said by stop()
  monitor.on('error', (error: Error) => (failure = error));
  const counts = new Map<string, number>();
  let script = 'client';
  const shape = (key: string | undefined): string => {
    if (key === undefined) return '';
    if (!key.startsWith(prefix)) return /^\d+$/.test(key) ? '' : key.length > 24 ? '(text)' : key;
    return key
      .slice(prefix.length)
      .replace(/^:/, '')
      .split(':')
      .map((part, i) =>
        i === 0 ||
        /^(wait|active|paused|meta|events|id|delayed|prioritized|completed|failed|stalled|stalled-check|limiter|marker|pc|lock|ledger|batch|breaker|state|n|workers|info|unqueued|dead|held|stats)$/.test(
          part,
        )
          ? part
          : '*',
      )
      .join(':');
  };
  monitor.on('monitor', ({ args, source }: MonitorLine) => {
    const [raw, ...rest] = args;
    const command = (raw ?? '').toUpperCase();
    let caller: string;
    if (source === 'lua') caller = script;
    else if (command === 'EVALSHA' || command === 'EVAL') {
      const body = rest[0] ?? '';
      const name =
        names.get(command === 'EVAL' ? createHash('sha1').update(unquoteMonitorArg(body)).digest('hex') : body) ??
        `script ${body.slice(0, 8)}`;
      script = name;
      caller = name;
    } else caller = 'client';
    const key = command === 'EVALSHA' || command === 'EVAL' ? '' : shape(rest[0]);
    const row = `${caller} > ${command}${key === '' ? '' : ` ${key}`}`;
    counts.set(row, (counts.get(row) ?? 0) + 1);
  });
  return {
    async stop() {
      monitor.destroy();
      if (failure !== undefined) throw new Error(`MONITOR's connection failed while watching: ${failure.message}`);
      return [...counts.entries()].sort((a, b) => b[1] - a[1]);
    },
  };
}

/** The scripts a delivery runs, by SHA-1: BullMQ's (loaded by a Queue under `prefix`) and ours (src/lua/, every one defined up front). */
export async function knownScripts(client: Redis, prefix: string): Promise<ScriptNames> {
  const connection = client.duplicate();
  const queue = new Queue(ORDERS_QUEUE, { connection, prefix });
  try {
    await queue.waitUntilReady();
    defineScripts(connection);
    return scriptNames([connection]);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}
