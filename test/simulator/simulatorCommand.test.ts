import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { projectRoot } from '../../src/paths.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createAgent, send } from './simulatorHarness.js';

const CLI = join(projectRoot, 'src', 'cli.ts');
let agent: Agent;

beforeAll(() => {
  agent = createAgent();
});
afterAll(async () => {
  await agent.close();
});

function runCli(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', CLI, 'simulator', ...args], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function firstLine(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return line;
}

async function exitOf(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

describe('bulkorder simulator', () => {
  it('runs in the foreground, prints its URL and credentials, applies fault flags, and stops cleanly on SIGTERM', async () => {
    const child = runCli([
      '--port',
      '0',
      '--json',
      '--error-rate',
      '1',
      '--token-lifetime',
      '77',
      '--business-client-secret',
      'custom-secret',
    ]);
    const exited = exitOf(child);
    const started = JSON.parse(await firstLine(child)) as {
      url: string;
      credentials: { business: { clientId: string; clientSecret: string } };
    };
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(started.credentials.business).toEqual({ clientId: 'sim-business', clientSecret: 'custom-secret' });

    const token = await send(agent, `${started.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=sim-business&client_secret=custom-secret',
    });
    expect(token.json.expires_in).toBe(77);
    const faults = await send(agent, `${started.url}/__admin/faults`);
    expect(faults.json.serverErrorRate).toBe(1);

    child.kill('SIGTERM');
    const { code, stderr } = await exited;
    expect(code).toBe(0);
    expect(stderr).toContain('simulator stopped');
  });

  it('prints a banner with the settings to use when not --json', async () => {
    const child = runCli(['--port', '0']);
    const exited = exitOf(child);
    const lines = createInterface({ input: child.stdout! });
    const seen: string[] = [];
    for await (const line of lines) {
      seen.push(line);
      if (line.startsWith('Press Ctrl+C')) break;
    }
    child.kill('SIGINT');
    expect((await exited).code).toBe(0);
    const text = seen.join('\n');
    expect(text).toMatch(/BULKORDER_BASE_URL=http:\/\/127\.0\.0\.1:\d+/);
    expect(text).toContain('BULKORDER_BUSINESS_CLIENT_ID=sim-business');
    expect(text).toContain('BULKORDER_CAFETARIAPLAN_CLIENT_SECRET=sim-cafetariaplan-secret');
  });

  it('refuses a bad flag value with exit code 2', async () => {
    const { code, stderr } = await exitOf(runCli(['--error-rate', '1.5']));
    expect(code).toBe(2);
    expect(stderr).toContain('--error-rate');
  });

  it('refuses a port in use with exit code 2', async () => {
    const busy = await startSimulator();
    try {
      const port = new URL(busy.url).port;
      const { code, stderr } = await exitOf(runCli(['--port', port]));
      expect(code).toBe(2);
      expect(stderr).toContain('EADDRINUSE');
    } finally {
      await busy.close();
    }
  });
});
