import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ownedTempDir, removeOwnedTempDir } from './ownedTempDir.js';
import { sparePort, waitUntilAnswering } from './privateRedis.js';

const run = promisify(execFile);

export interface TestCluster {
  /** Seed nodes as BULKORDER_REDIS_CLUSTER_NODES wants them: `host:port,...`. */
  readonly nodes: string;
  /** Process ids of the nodes this helper started (none for .ci/run's): benchmarks read their CPU time. */
  readonly pids: readonly number[];
  /** Stops the nodes this helper started (none when .ci/run's cluster was used) and removes their folders. */
  stop(): Promise<void>;
}

/** A cluster of the test's own with a replica per master, whose masters a test may kill (startFailoverCluster). */
export interface FailoverCluster extends TestCluster {
  /** The port of the node that is master of `key`'s slot now (asked of a live node). */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs the node on `port` (no shutdown, as in a crash); its replica takes over after the node timeout. */
  kill(port: number): Promise<void>;
  /** Starts a killed node again on its port and folder: it rejoins as a replica of the master that took over. */
  restart(port: number): Promise<void>;
  /** `CONFIG SET cluster-node-timeout` on every live node (how long a dead master goes unnoticed). */
  setNodeTimeout(ms: number): Promise<void>;
  /** Resolves once every live node says `cluster_state:ok` and `key`'s slot has a live master (polling; bounded). */
  settled(key: string): Promise<void>;
}

/**
 * The Redis Cluster the tests use: .ci/run's (REDIS_CLUSTER_NODES), else three
 * `redis-server --cluster-enabled yes` nodes of the test's own on spare ports, joined with
 * `redis-cli --cluster create` and waited for until every node says `cluster_state:ok`.
 * Needs `redis-server` and `redis-cli` on the PATH.
 */
export async function startTestCluster(): Promise<TestCluster> {
  const given = process.env.REDIS_CLUSTER_NODES;
  if (given !== undefined && given !== '') return { nodes: given, pids: [], stop: async () => undefined };
  const started = await startNodes(3, 0, 5000);
  return { nodes: started.nodes, pids: started.pids, stop: started.stop };
}

/**
 * Three masters and three replicas of the test's own (never .ci/run's shared cluster: a test kills
 * its masters), with a short `cluster-node-timeout` so that a killed master's replica takes over
 * within seconds. AOF on (everysec), as a production cluster would run.
 */
export async function startFailoverCluster(nodeTimeoutMs = 2000): Promise<FailoverCluster> {
  const started = await startNodes(6, 1, nodeTimeoutMs);
  const alive = () => started.ports.filter((port) => isLive(started.children.get(port)));
  const ask = async (args: string[]): Promise<string> => {
    let last: unknown;
    for (const port of alive()) {
      try {
        return (await run('redis-cli', ['-p', String(port), ...args])).stdout;
      } catch (error) {
        last = error;
      }
    }
    throw new Error(`no live node of the test cluster answers: ${String(last)}`);
  };
  const masterOf = async (key: string): Promise<number> => {
    const slot = Number((await ask(['cluster', 'keyslot', key])).trim());
    // CLUSTER NODES: `<id> <ip:port@cport> <flags> <master> ... <connected|disconnected> <slot ranges...>`
    for (const line of (await ask(['cluster', 'nodes'])).split('\n')) {
      const fields = line.trim().split(' ');
      if (!/(^|,)master(,|$)/.test(fields[2] ?? '') || /fail/.test(fields[2] ?? '')) continue;
      for (const range of fields.slice(8)) {
        const [from, to] = range.split('-').map(Number);
        if (slot >= from! && slot <= (to ?? from)!) return Number(fields[1]!.split('@')[0]!.split(':')[1]);
      }
    }
    throw new Error(`no live master holds the slot ${slot} of ${key}`);
  };
  return {
    nodes: started.nodes,
    pids: started.pids,
    stop: started.stop,
    masterOf,
    async kill(port) {
      const child = started.children.get(port);
      if (child === undefined) throw new Error(`no node of the test cluster on port ${port}`);
      await killChild(child);
    },
    async restart(port) {
      await started.spawnNode(port);
      for (let i = 0; !(await replicated(alive(), 1)); i++) {
        if (i > 1200) throw new Error(`the restarted node ${port} did not rejoin as an up-to-date replica`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async setNodeTimeout(ms) {
      for (const port of alive())
        await run('redis-cli', ['-p', String(port), 'config', 'set', 'cluster-node-timeout', String(ms)]);
    },
    async settled(key) {
      for (let i = 0; ; i++) {
        try {
          const master = await masterOf(key);
          if (alive().includes(master) && (await allOk(alive()))) return;
        } catch (error) {
          if (i > 1200) throw error;
        }
        if (i > 1200) throw new Error(`the test cluster did not settle (cluster_state:ok, a live master of ${key})`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

interface StartedNodes {
  nodes: string;
  ports: number[];
  pids: number[];
  children: Map<number, ChildProcess>;
  /** Starts the node of `port` (again) with its arguments and folder. */
  spawnNode(port: number): Promise<void>;
  stop(): Promise<void>;
}

async function startNodes(count: number, replicas: number, nodeTimeoutMs: number): Promise<StartedNodes> {
  const children = new Map<number, ChildProcess>();
  const dirs: string[] = [];
  const stop = async () => {
    await Promise.all([...children.values()].map(killChild));
    await Promise.all(dirs.map((dir) => removeOwnedTempDir(dir)));
  };
  const argsOf = new Map<number, string[]>();
  const spawnNode = async (port: number): Promise<void> => {
    const child = spawn('redis-server', argsOf.get(port)!, { stdio: 'ignore' });
    live.add(child);
    child.once('exit', () => live.delete(child));
    children.set(port, child);
    await waitUntilAnswering(`redis://127.0.0.1:${port}`);
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const port = await sparePort();
      const dir = ownedTempDir('bulkorder-rediscluster-');
      dirs.push(dir);
      const persistence = replicas > 0 ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence];
      args.push(
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, 'nodes.conf'),
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
      );
      args.push('--maxmemory-policy', 'noeviction');
      argsOf.set(port, args);
      await spawnNode(port);
      ports.push(port);
    }
    const addresses = ports.map((port) => `127.0.0.1:${port}`);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...addresses,
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    // Replicas join (and the cluster agrees) a moment after `create` returns: wait for every node to say ok.
    for (let i = 0; !(await allOk(ports)) || !(await replicated(ports, replicas)); i++) {
      if (i > 600) throw new Error(`the test cluster at ${addresses.join(',')} did not reach cluster_state:ok`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return {
      nodes: addresses.join(','),
      ports,
      pids: [...children.values()].map((child) => child.pid ?? 0),
      children,
      spawnNode,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function isLive(child: ChildProcess | undefined): boolean {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** Every node started and not yet exited: killed when the test process exits, whatever the tests did. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Every master has its replicas attached and in sync (`master_link_status:up` on each replica). */
async function replicated(ports: number[], replicas: number): Promise<boolean> {
  if (replicas === 0) return true;
  let up = 0;
  for (const port of ports) {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'info', 'replication']);
    if (/^master_link_status:up\r?$/m.test(stdout)) up++;
  }
  return up === Math.floor((ports.length * replicas) / (replicas + 1));
}

async function allOk(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
    if (!/^cluster_state:ok\r?$/m.test(stdout)) return false;
  }
  return true;
}
