import { spawn } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { openOrderSource, type IngestOptions } from '../../src/ingest/openOrderSource.js';
import { defaultIngestThreads } from '../../src/ingest/unitPool.js';
import { ingestOptionsFromFlags } from '../../src/ingest/ingestFlags.js';
import type { IngestItem } from '../../src/ingest/types.js';
import { HEADER, row, tempDir } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

/** 3,000 rows: orders of 1-3 lines spread over the file, and every fifth row with a mistake somewhere. */
function mixedFile(): string {
  const out = [HEADER];
  const mistakes: Record<string, string>[] = [
    { quantity: 'two' },
    { telephoneNumber: '0612345678' },
    { countryCode: 'nl ' },
    { email: 'jan@' },
    { streetNumber: '12a' },
    { orderRef: '' },
    { firstName: '=SUM(A1)' },
  ];
  for (let i = 0; i < 3000; i++) {
    const over: Record<string, string> = {
      orderRef: `M-${i % 1700}`,
      productId: String(5001 + (i % 7)),
      quantity: String(1 + (i % 4)),
    };
    if (i % 5 === 0) Object.assign(over, mistakes[(i / 5) % mistakes.length]);
    if (i % 11 === 0) over.city = 'Rotterdam'; // a recipient mismatch inside some multi-line orders
    out.push(row(over));
  }
  out.push('M-1,1001,too,few,cells');
  return out.join('\n') + '\n';
}

async function read(
  file: string,
  options: IngestOptions,
): Promise<{ items: IngestItem[]; stats: unknown; blank: number }> {
  const source = await openOrderSource(file, options);
  const items: IngestItem[] = [];
  for await (const item of source.items()) items.push(item);
  return { items, stats: source.stats(), blank: source.blankRows() };
}

/** Runs a script under tsx in a process of its own: its stdout, exit code, and whether it had to be killed. */
function runScript(script: string): Promise<{ out: string; code: number | null; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000); // a thread left running would keep it alive (a bound for a hang on a loaded machine, not a speed)
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ out, code, timedOut: signal === 'SIGKILL' });
    });
  });
}

describe('validation threads', () => {
  it(
    'rows validated in threads give exactly the items of the main thread, in the same order',
    { timeout: 60_000 },
    async () => {
      const file = await tmp.file('mixed.csv', mixedFile() + ',,,,,,,,,,,,,\n');
      const spill = join(tmp.dir, 'spill');
      await mkdir(spill);
      const options: IngestOptions = {
        spillThresholdBytes: 0,
        streamWindowRows: 0,
        bucketBytes: 16 * 1024,
        tmpDir: spill,
      };
      const inProcess = await read(file, { ...options, threads: 0 });
      const threaded = await read(file, { ...options, threads: 2 });
      expect(inProcess.items.filter((item) => item.kind === 'rejected').length).toBeGreaterThan(100);
      expect(threaded).toEqual(inProcess);
      expect(await readdir(spill)).toEqual([]);
    },
  );

  it('the thread count follows the cores: none below 4, then 1 (memory); --threads overrides it', async () => {
    expect([1, 2, 3, 4, 64].map((cores) => defaultIngestThreads(cores))).toEqual([0, 0, 0, 1, 1]);
    expect((await ingestOptionsFromFlags({ threads: '0' })).threads).toBe(0);
    await expect(ingestOptionsFromFlags({ threads: 'many' })).rejects.toMatchObject({ code: 'THREADS_INVALID' });
  });

  it(
    'a process that read a file with threads ends by itself: after a full read, a stop after the first item, and a refused file',
    { timeout: 240_000 },
    async () => {
      const good = await tmp.file('good.csv', mixedFile());
      const refused = await tmp.file('refused.csv', mixedFile() + 'X-1,1001,"never closed\n');
      const script = await tmp.file(
        'read.mts',
        `import { openOrderSource } from ${JSON.stringify(join(projectRoot, 'src/ingest/openOrderSource.ts'))};\n` +
          `const options = { spillThresholdBytes: 0, streamWindowRows: 0, bucketBytes: 16384, tmpDir: ${JSON.stringify(tmp.dir)}, threads: 2 };\n` +
          `let n = 0;\n` +
          `for await (const _ of (await openOrderSource(${JSON.stringify(good)}, options)).items()) n++;\n` +
          `for await (const _ of (await openOrderSource(${JSON.stringify(good)}, options)).items()) break;\n` +
          `let code = '';\n` +
          `try { for await (const _ of (await openOrderSource(${JSON.stringify(refused)}, options)).items()) n++; } catch (error) { code = error.code; }\n` +
          `process.stdout.write(JSON.stringify({ n, code }));\n`,
      );
      const ran = await runScript(script);
      expect(ran.timedOut).toBe(false);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.out)).toMatchObject({ code: 'CSV_QUOTE_NOT_CLOSED' });
      expect((await readdir(tmp.dir)).filter((name) => name.startsWith('bulkorder-ingest-'))).toEqual([]);
    },
  );

  it(
    "a pool closed while a batch is under way waits for the thread's answer (it arrived after the threads were stopped and was thrown uncaught: CI of bf97aee)",
    { timeout: 240_000 },
    async () => {
      const src = (name: string): string => JSON.stringify(join(projectRoot, name));
      // The reader stops at the first batch handed back while the second is under way, and keeps the main thread busy
      // long enough for the thread to answer it, as a file refused at that batch on a loaded machine did.
      const script = await tmp.file(
        'close.mts',
        `import { createUnitPool } from ${src('src/ingest/unitPool.ts')};\n` +
          `import { resolveColumns } from ${src('src/ingest/resolveColumns.ts')};\n` +
          `import { HEADER, row } from ${src('test/ingest/ingestHelpers.ts')};\n` +
          `const plan = resolveColumns('x.csv', HEADER.split(','));\n` +
          `async function* records() { for (let i = 0; i < 5000; i++) yield { kind: 'record', line: i + 2, values: row({ orderRef: 'R-' + i }).split(',') }; }\n` +
          `let batches = 0;\n` +
          `for (let n = 0; n < 4; n++) {\n` +
          `  const pool = createUnitPool({ threads: 1, schema: 'orders', plan, rules: { strictPhone: false }, bucketCount: 4 });\n` +
          `  try {\n` +
          `    for await (const _ of pool.encode(records())) { batches++; const end = Date.now() + 400; while (Date.now() < end); break; }\n` +
          `  } finally { await pool.close(); }\n` +
          `}\n` +
          `await new Promise((resolve) => setTimeout(resolve, 200));\n` +
          `process.stdout.write(JSON.stringify({ batches }));\n`,
      );
      const ran = await runScript(script);
      expect(ran.timedOut).toBe(false);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.out)).toEqual({ batches: 4 });
    },
  );
});
