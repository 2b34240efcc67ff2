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
      const ran = await new Promise<{ out: string; code: number | null; timedOut: boolean }>((resolve) => {
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
      expect(ran.timedOut).toBe(false);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.out)).toMatchObject({ code: 'CSV_QUOTE_NOT_CLOSED' });
      expect((await readdir(tmp.dir)).filter((name) => name.startsWith('bulkorder-ingest-'))).toEqual([]);
    },
  );
});
