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

/**
 * The Redis Cluster the tests use: .ci/run's (REDIS_CLUSTER_NODES), else three
 * `redis-server --cluster-enabled yes` nodes of the test's own on spare ports, joined with
 * `redis-cli --cluster create` and waited for until every node says `cluster_state:ok`.
 * Needs `redis-server` and `redis-cli` on the PATH.
 */
export async function startTestCluster(): Promise<TestCluster> {
  const given = process.env.REDIS_CLUSTER_NODES;
  if (given !== undefined && given !== '') return { nodes: given, pids: [], stop: async () => undefined };

  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }),
    );
    await Promise.all(dirs.map((dir) => removeOwnedTempDir(dir)));
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await sparePort();
      const dir = ownedTempDir('bulkorder-rediscluster-');
      dirs.push(dir);
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
      args.push(
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, 'nodes.conf'),
        '--cluster-node-timeout',
        '5000',
      );
      args.push('--maxmemory-policy', 'noeviction');
      children.push(spawn('redis-server', args, { stdio: 'ignore' }));
      await waitUntilAnswering(`redis://127.0.0.1:${port}`);
      ports.push(port);
    }
    const addresses = ports.map((port) => `127.0.0.1:${port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    for (let i = 0; !(await allOk(ports)); i++) {
      if (i > 200) throw new Error(`the test cluster at ${addresses.join(',')} did not reach cluster_state:ok`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return { nodes: addresses.join(','), pids: children.map((child) => child.pid ?? 0), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function allOk(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
    if (!/^cluster_state:ok\r?$/m.test(stdout)) return false;
  }
  return true;
}
