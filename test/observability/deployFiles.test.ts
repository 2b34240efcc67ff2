import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli.js';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { startWorkerObservers } from '../../src/health/workerObservers.js';
import { startBusinessDelivery } from '../../src/assembly/startWorkers.js';
import { dashboardApp } from '../../src/dashboard/dashboardApp.js';
import { openDashboardState } from '../../src/dashboard/dashboardState.js';
import { deliveryRig } from '../helpers/deliveryRig.js';

const PROMTOOL = '/usr/bin/promtool';
const ROOT = join(import.meta.dirname, '../..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const TOKEN = 'deploy-test-token-0123456789';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function needPromtool(): void {
  if (!existsSync(PROMTOOL))
    throw new Error(`This test needs Debian's prometheus package for ${PROMTOOL} (apt-get install -y prometheus).`);
}

/** Every metric name a query names: ours are `bulkorder_*`, plus Prometheus's own `up`. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\bbulkorder_[a-z0-9_]+/g)].map((m) => m[0]);
}

interface Rules {
  groups: { rules: { alert: string; expr: string }[] }[];
}
interface RuleTests {
  tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
}
interface Grafana {
  panels: { title: string; targets: { expr: string }[] }[];
}
interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
  env_file?: { path: string }[];
  ports?: string[];
  profiles?: string[];
  healthcheck?: { test: string[] };
  volumes?: string[];
  build?: string;
}

const alerts = (): Rules['groups'][number]['rules'] =>
  (parse(read('deploy/prometheus/alerts.yml')) as Rules).groups.flatMap((g) => g.rules);
const panels = (): Grafana['panels'] => (JSON.parse(read('deploy/grafana/bulkorder-dashboard.json')) as Grafana).panels;

/** The names a real worker's /metrics exposes (histograms with their _bucket, _sum and _count series). */
async function exposedNames(): Promise<Set<string>> {
  const rig = await deliveryRig('deploy-metrics');
  cleanups.push(() => rig.close());
  const observers = await startWorkerObservers(rig.config, rig.logger, { httpPort: 0, pollMs: 200 });
  cleanups.push(() => observers.close());
  const worker = await startBusinessDelivery(rig.config, rig.logger, {
    prefix: rig.prefix,
    metrics: observers.metrics,
  });
  cleanups.push(() => worker.close());
  const text = await (await fetch(`${observers.url}/metrics`)).text();
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name! + s);
  }
  return names;
}

describe('deploy/prometheus: alert rules', () => {
  it('pass `promtool test rules`, and every alert is tested both firing and not firing', () => {
    needPromtool();
    const tested = spawnSync(PROMTOOL, ['test', 'rules', 'alerts.test.yml'], {
      cwd: join(ROOT, 'deploy/prometheus'),
      encoding: 'utf8',
    });
    expect(tested.stdout + tested.stderr).toContain('SUCCESS');
    expect(tested.status).toBe(0);
    const cases = (parse(read('deploy/prometheus/alerts.test.yml')) as RuleTests).tests.flatMap(
      (t) => t.alert_rule_test,
    );
    const names = alerts().map((a) => a.alert);
    expect(names.length).toBeGreaterThanOrEqual(6);
    for (const name of names) {
      const mine = cases.filter((c) => c.alertname === name);
      expect(
        mine.some((c) => c.exp_alerts.length === 0),
        `${name} not firing`,
      ).toBe(true);
      expect(
        mine.some((c) => c.exp_alerts.length > 0),
        `${name} firing`,
      ).toBe(true);
    }
  });

  it('prometheus.yml for compose loads the rules and passes `promtool check config`', () => {
    needPromtool();
    const dir = mkdtempSync(join(tmpdir(), 'bulkorder-prom-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // In the container the rules sit at /etc/prometheus/alerts.yml; here beside a copy of the config.
    writeFileSync(join(dir, 'alerts.yml'), read('deploy/prometheus/alerts.yml'));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      read('deploy/prometheus/prometheus.yml').replace('/etc/prometheus/alerts.yml', 'alerts.yml'),
    );
    const checked = spawnSync(PROMTOOL, ['check', 'config', 'prometheus.yml'], { cwd: dir, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toContain('SUCCESS: 6 rules found');
    expect(checked.status).toBe(0);
  });
});

describe('alert rules and the Grafana dashboard against a real worker /metrics', () => {
  it("name only metrics the worker exposes, and the dashboard shows every one of bulkorder's own", async () => {
    const exposed = await exposedNames();
    expect(exposed.has('bulkorder_orders_total')).toBe(true);
    for (const a of alerts())
      for (const name of metricNames(a.expr)) expect(exposed.has(name), `${a.alert}: ${name}`).toBe(true);
    const queried = new Set<string>();
    for (const p of panels())
      for (const t of p.targets)
        for (const name of metricNames(t.expr)) {
          expect(exposed.has(name), `${p.title}: ${name}`).toBe(true);
          queried.add(name.replace(/_(bucket|sum|count)$/, ''));
        }
    // Our own metrics (not prom-client's process_* and nodejs_* defaults) each on some panel.
    const own = [...exposed].filter((n) => !/^bulkorder_(process|nodejs)_/.test(n) && !/_(bucket|sum|count)$/.test(n));
    expect(own.filter((n) => !queried.has(n))).toEqual([]);
  }, 60_000);
});

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml')) as { services: Record<string, ComposeService> };
  const program = buildProgram('0.0.0-test', {
    stdout: process.stdout,
    stderr: process.stderr,
    env: {},
    setExitCode: () => undefined,
  });
  const sub = (name: string): Command => {
    const found = program.commands.find((c) => c.name() === name);
    if (found === undefined) throw new Error(`no command ${name}`);
    return found;
  };
  const flag = (command: string[], name: string): string | undefined => {
    const i = command.indexOf(name);
    return i < 0 ? undefined : command[i + 1];
  };
  const ours = Object.entries(compose.services).filter(([, s]) => s.build === '.');

  it("runs real commands with real flags; no --config-file, so REDIS_URL=redis://redis:6379 beats .env's", () => {
    expect(ours.map(([name]) => name).sort()).toEqual(['dashboard', 'worker']);
    for (const [name, service] of ours) {
      const command = service.command!;
      const cli = sub(command[0]!);
      const known = new Set(cli.options.map((o) => o.long));
      for (const token of command.filter((t) => t.startsWith('--')))
        expect(known.has(token), `${name}: ${token}`).toBe(true);
      expect(command, name).not.toContain('--config-file');
      expect(
        service.env_file?.map((f) => f.path),
        name,
      ).toEqual(['.env']);
      expect(service.environment?.REDIS_URL, name).toBe('redis://redis:6379');
      for (const variable of Object.keys(service.environment ?? {}))
        expect(CONFIG_VARIABLES, `${name}: ${variable}`).toContain(variable);
    }
    expect(flag(compose.services.worker!.command!, '--processes')).toBe('1');
    expect(compose.services.dashboard!.environment!.BULKORDER_DASHBOARD_TOKEN).toMatch(
      /^\$\{BULKORDER_DASHBOARD_TOKEN:\?.+\}$/,
    );
  });

  it('health checks and ports name the ports the commands listen on and routes that answer', async () => {
    for (const [name, service] of Object.entries(compose.services))
      expect(service.healthcheck?.test.length, `${name} has a health check`).toBeGreaterThan(1);
    const worker = compose.services.worker!;
    const dashboard = compose.services.dashboard!;
    const workerPort = flag(worker.command!, '--http-port');
    const dashboardPort = flag(dashboard.command!, '--port');
    expect(flag(worker.command!, '--http-host')).toBe('0.0.0.0');
    expect(flag(dashboard.command!, '--host')).toBe('0.0.0.0');
    expect(worker.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${workerPort}/readyz`);
    expect(dashboard.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${dashboardPort}/healthz`);
    expect(dashboard.ports).toEqual([`127.0.0.1:${dashboardPort}:${dashboardPort}`]);
    expect(read('deploy/prometheus/prometheus.yml')).toContain(`port: ${workerPort}`);
    for (const [name, service] of Object.entries(compose.services))
      for (const volume of service.volumes ?? [])
        if (volume.startsWith('./') && !volume.startsWith('./.env'))
          expect(existsSync(join(ROOT, volume.split(':')[0]!)), `${name}: ${volume}`).toBe(true);
    expect(compose.services.prometheus!.profiles).toEqual(['monitoring']);
    expect(compose.services.grafana!.profiles).toEqual(['monitoring']);
    expect(compose.services.redis!.command).toEqual(expect.arrayContaining(['--appendonly', 'yes', 'noeviction']));

    // The routes the health checks call answer on a real worker and a real dashboard.
    const rig = await deliveryRig('deploy-health', {}, { BULKORDER_DASHBOARD_TOKEN: TOKEN });
    cleanups.push(() => rig.close());
    const observers = await startWorkerObservers(rig.config, rig.logger, { httpPort: 0, pollMs: 200 });
    cleanups.push(() => observers.close());
    expect((await fetch(`${observers.url}/healthz`)).status).toBe(200);
    const state = await openDashboardState(rig.config, rig.logger);
    cleanups.push(() => state.close());
    const app = dashboardApp(state, { readOnly: false, shuttingDown: () => false });
    expect((await app.request('/healthz')).status).toBe(200);
  }, 60_000);

  const compose2 = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  it.skipIf(compose2.status !== 0)('`docker compose config` accepts it (where docker compose is installed)', () => {
    const checked = spawnSync('docker', ['compose', '-f', 'docker-compose.yml', 'config', '--quiet'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, BULKORDER_DASHBOARD_TOKEN: TOKEN },
    });
    expect(checked.stderr).toBe('');
    expect(checked.status).toBe(0);
  });
});
