import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { samplesDir } from '../../src/paths.js';
import { runCli, tempDir } from '../ingest/ingestHelpers.js';

describe('bulkorder accounts validate', () => {
  it('checks an employee file without Redis or network: 0 when valid, 4 with a rejects file, 3 for an order file', async () => {
    const t = await tempDir();
    try {
      const ok = await runCli(['accounts', 'validate', join(samplesDir, 'employees.ndjson'), '--json']);
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ format: 'ndjson', valid: 2, rejected: 0, rejectsFile: null });

      const file = join(t.dir, 'staff.csv');
      await copyFile(join(samplesDir, 'employees-mistakes.csv'), file);
      const bad = await runCli(['accounts', 'validate', file]);
      expect(bad.code).toBe(4);
      expect(bad.stdout).toMatch(/accounts\s+5\n\s+valid\s+1\n\s+rejected\s+4/);
      expect(bad.stdout).toMatch(/DUPLICATE_ACCOUNT \(email\)/);
      const rejects = await readFile(join(t.dir, 'staff.csv.rejects.csv'), 'utf8');
      // The input has no byte-order mark: neither has its rejects file (the input's dialect).
      expect(rejects.split('\r\n')[0]).toBe(
        'email,firstName,lastName,isoLanguageCode,companyId,reject_line,reject_codes,reject_reasons',
      );

      const orders = await runCli(['accounts', 'validate', join(samplesDir, 'gift-orders.csv')]);
      expect(orders.code).toBe(3);
      expect(orders.stderr).toMatch(/missing required column: companyId/);
    } finally {
      await t.cleanup();
    }
  });
});
