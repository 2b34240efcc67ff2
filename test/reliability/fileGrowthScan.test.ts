/**
 * A file appended to while its scan read it, before anything of its batch exists: refused whole
 * (FILE_CHANGED_WHILE_READ, exit 3, no batch, nothing queued). The same fault later in the import, with
 * real CLI processes and thousands of orders, is test/reliability/fileGrowth.test.ts (faults tier).
 */
import { appendFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryRig, orderRow, ordersCsv, type DeliveryRig } from '../helpers/deliveryRig.js';
import { importFile } from '../../src/importer/importFile.js';
import { FileRefusedError } from '../../src/errors.js';
import type { IngestOptions, RecordSource } from '../../src/ingest/openRecordSource.js';
import type { OrderPayload } from '../../src/ingest/types.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Rows `<prefix>-<from>`... as the writer appends them. */
function moreRows(prefix: string, from: number, count: number): string {
  return Array.from({ length: count }, (_, i) => orderRow(`${prefix}-${from + i}`)).join('\n') + '\n';
}

describe('a file that grows while it is imported is refused whole, never half', () => {
  it('appended to while its scan read it (before anything exists): FILE_CHANGED_WHILE_READ, exit 3, no batch, nothing queued', async () => {
    rig = await deliveryRig('grow-scan');
    const file = await rig.writeFile('scanned.csv', ordersCsv('S', 200));
    const deps = rig.services.pipeline(rig.logger);
    // The writer appends while the scan reads: here, as the scan ends (the scan is a read of the whole file).
    const openSource = async (path: string, options: IngestOptions): Promise<RecordSource<OrderPayload>> => {
      const source = await deps.kind.openSource(path, options);
      const scan = source.scan.bind(source);
      source.scan = async (scanOptions) => {
        const result = await scan(scanOptions);
        await appendFile(path, moreRows('S', 201, 10));
        return result;
      };
      return source;
    };
    const refused = await importFile(file, {}, { ...deps, kind: { ...deps.kind, openSource } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(FileRefusedError);
    expect((refused as FileRefusedError).code).toBe('FILE_CHANGED_WHILE_READ');
    expect((refused as FileRefusedError).exitCode).toBe(3);
    expect((refused as FileRefusedError).message).toContain('scanned.csv');
    expect(await rig.services.batches.list(10)).toEqual([]);
    expect(await rig.services.queue.count()).toBe(0);
    // Unchanged since: the same file imports whole.
    const result = await importFile(file, {}, deps);
    expect(result.counts.enqueued).toBe(210);
  });
});
