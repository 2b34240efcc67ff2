import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorSink } from '../../src/ingest/errorSink.js';
import { validateFile } from '../../src/ingest/validateFile.js';
import { validationReport } from '../../src/ingest/validationReport.js';
import { ORDERS } from '../../src/kinds/orders.js';
import type { RowError } from '../../src/ingest/types.js';
import { HEADER, row, tempDir } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('validate --json gives every error', () => {
  it('all errors in the report, not only the first ten', async () => {
    const rows = Array.from({ length: 25 }, (_, i) => row({ orderRef: `E-${i}`, quantity: 'x' }));
    const file = await tmp.file('bad.csv', [HEADER, ...rows].join('\n') + '\n');
    let out = '';
    const sink = new ErrorSink((text) => (out += text));
    const result = await validateFile(file, { onError: (e) => sink.add(e) }, ORDERS);
    const report = JSON.parse(validationReport(file, result, true, sink)) as {
      errors: RowError[];
      firstErrors: RowError[];
    };
    expect(out).toBe('');
    expect(report.firstErrors).toHaveLength(10);
    expect(report.errors).toHaveLength(25);
    expect(report.errors[24]!.message).toMatch(/bad\.csv:26: quantity 'x'/);
  });

  it('turns into NDJSON past its limit, one error per line, then the report', () => {
    const lines: string[] = [];
    const sink = new ErrorSink((text) => lines.push(text), 3);
    for (let i = 1; i <= 5; i++) sink.add({ line: i, code: 'INTEGER_INVALID', message: `m${i}` });
    expect(sink.ndjson).toBe(true);
    expect(lines.map((l) => (JSON.parse(l) as { error: RowError }).error.line)).toEqual([1, 2, 3, 4, 5]);
    expect(sink.count).toBe(5);
  });
});
