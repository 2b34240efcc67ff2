import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { samplesDir } from '../../src/paths.js';
import { HEADER, row, runCli, tempDir } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('bulkorder validate', () => {
  it('has a help text that stands on its own', async () => {
    const { code, stdout } = await runCli(['validate', '--help']);
    expect(code).toBe(0);
    for (const text of [
      'Usage: bulkorder validate',
      '--encoding',
      '--map',
      '--out',
      '--json',
      'Examples:',
      'bulkorder validate samples/gift-orders.csv',
      'Exit codes: 0',
    ]) {
      expect(stdout).toContain(text);
    }
  });

  it('exits 0 and prints a summary when every order is valid', async () => {
    const { code, stdout } = await runCli(['validate', join(samplesDir, 'multi-line-orders.csv')]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/rows\s+14/);
    expect(stdout).toMatch(/orders\s+6/);
    expect(stdout).toMatch(/rejected\s+0/);
  });

  it('exits 4 with top error kinds and a rejects file when rows are rejected; --json for machines', async () => {
    const out = join(tmp.dir, 'mistakes.rejects.csv');
    const { code, stdout } = await runCli(['validate', join(samplesDir, 'mistakes.csv'), '--out', out, '--json']);
    expect(code).toBe(4);
    const report = JSON.parse(stdout) as {
      rows: number;
      valid: number;
      rejected: number;
      errorKinds: { code: string }[];
      rejectsFile: string;
      exitCode: number;
    };
    expect(report).toMatchObject({ rows: 21, rejectsFile: out, exitCode: 4 });
    // Like every --json: it ends with the exit code and what it means.
    expect(Object.entries(report).slice(-2)).toEqual([
      ['exitCode', 4],
      ['exitMeaning', 'some rows or orders need attention'],
    ]);
    expect(report.valid + report.rejected).toBe(19);
    expect(report.errorKinds.map((k) => k.code)).toContain('PHONE_INVALID');
    expect(await readFile(out, 'utf8')).toContain('reject_reasons');
    // personal data never appears unmasked on stdout
    expect(stdout).not.toContain('sanne.bakker@example');
    expect(stdout).not.toContain('+31 6 987,');
  });

  it('exits 3 for a file refused as a whole, with the reason on stderr (and stdout with --json)', async () => {
    const file = await tmp.file('cols.csv', 'orderRef,name\nA,Jan\n');
    const plain = await runCli(['validate', file]);
    expect(plain.code).toBe(3);
    expect(plain.stderr).toContain('missing required columns');
    const json = await runCli(['validate', file, '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ refused: { code: 'COLUMNS_MISSING', exitCode: 3 } });

    const ansi = await runCli(['validate', join(samplesDir, 'excel-ansi-windows-1252.csv')]);
    expect(ansi.code).toBe(3);
    expect(ansi.stderr).toContain('--encoding windows-1252');
    expect(
      (await runCli(['validate', join(samplesDir, 'excel-ansi-windows-1252.csv'), '--encoding', 'windows-1252'])).code,
    ).toBe(0);
  });

  it('exits 2 for usage errors', async () => {
    const file = await tmp.file('ok.csv', `${HEADER}\n${row()}\n`);
    expect((await runCli(['validate', file, '--format', 'xml'])).code).toBe(2);
    expect((await runCli(['validate', file, '--delimiter', ';;'])).code).toBe(2);
    expect((await runCli(['validate', file, '--map', join(tmp.dir, 'missing.json')])).code).toBe(2);
    expect((await runCli(['validate', await tmp.file('orders.xls', 'x')])).code).toBe(2);
    expect((await runCli(['validate'])).code).toBe(2);
  });

  it('reads a file with other column names through --map', async () => {
    const file = join(samplesDir, 'export-dutch-headers.csv');
    expect((await runCli(['validate', file])).code).toBe(3);
    const mapped = await runCli(['validate', file, '--map', join(samplesDir, 'export-dutch-headers.map.json')]);
    expect(mapped.code).toBe(0);
    expect(mapped.stdout).toContain('Ignored columns (not part of an order): "Opmerking"');
  });
});
