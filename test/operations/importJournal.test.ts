/**
 * The import journal and the results file read as a ledger (issue 26), on their own: what refuses,
 * what goes on, and what is refused as unreadable rather than guessed at. The whole path against a
 * Redis that forgets is test/reliability/ledgerLoss.test.ts.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readPriorResults } from '../../src/batches/priorResults.js';
import {
  checkLedger,
  journalPath,
  readJournal,
  withEntry,
  writeJournal,
  type JournalEntry,
} from '../../src/importer/importJournal.js';
import { ORDER_RESULTS } from '../../src/kinds/resultsLayout.js';
import type { NamespaceMarker } from '../../src/ledger/namespaceMarker.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-journal-'));
  dirs.push(dir);
  return dir;
}

const entry = (target: string, epoch: string): JournalEntry => ({
  target,
  env: 'acceptance',
  epoch,
  batchId: `b-${target}`,
  startedAt: '2026-11-26T01:00:00.000Z',
  updatedAt: '2026-11-26T01:00:05.000Z',
  state: 'complete',
});
const marker = (epoch: string): NamespaceMarker => ({ dataVersion: 2, createdAt: 0, createdBy: 't', epoch });

describe('the import journal', () => {
  it('is written whole beside the input, one entry per target, and read back', async () => {
    const dir = await folder();
    const file = join(dir, 'night.csv');
    const one = withEntry(file, undefined, entry('acc', 'e1'));
    const two = withEntry(file, one, entry('prod', 'e2'));
    const again = withEntry(file, two, { ...entry('acc', 'e3'), batchId: 'b-new' });
    await writeJournal(file, again, 'then');
    expect(journalPath(file)).toBe(`${file}.journal`);
    const read = await readJournal(file);
    expect(read?.imports.map((e) => [e.target, e.epoch, e.batchId])).toEqual([
      ['prod', 'e2', 'b-prod'],
      ['acc', 'e3', 'b-new'],
    ]);
    expect(await readJournal(join(dir, 'other.csv'))).toBeUndefined();
  });

  it('refuses LEDGER_LOST on another epoch of the same target only, and goes on when told to', async () => {
    const journal = withEntry('/x/night.csv', undefined, entry('acc', 'e1'));
    const args = {
      file: '/x/night.csv',
      journal,
      target: 'acc',
      markerCreated: true,
      prior: undefined,
      resultsPath: '/x/night.csv.results.csv',
      cli: 'bulkorder',
      noun: 'order',
    };
    expect(checkLedger({ ...args, marker: marker('e1'), policy: 'refuse' })).toBeUndefined();
    expect(checkLedger({ ...args, target: 'prod', marker: marker('e9'), policy: 'refuse' })).toBeUndefined();
    expect(() => checkLedger({ ...args, marker: marker('e2'), policy: 'refuse' })).toThrow(
      expect.objectContaining({
        code: 'LEDGER_LOST',
        exitCode: 5,
        details: expect.objectContaining({ batchId: 'b-acc', journalEpoch: 'e1', namespaceEpoch: 'e2' }),
      }),
    );
    expect(checkLedger({ ...args, marker: marker('e2'), policy: 'trust-results' })).toMatchObject({ batchId: 'b-acc' });
  });

  it('an unreadable journal or a file that is no results file is refused naming it (exit 2), not guessed at', async () => {
    const dir = await folder();
    const file = join(dir, 'night.csv');
    await writeFile(journalPath(file), 'not json');
    await expect(readJournal(file)).rejects.toMatchObject({ code: 'JOURNAL_UNREADABLE', exitCode: 2 });
    const results = join(dir, 'night.csv.results.csv');
    await writeFile(results, 'a,b\n1,2\n');
    await expect(readPriorResults(results, ORDER_RESULTS)).rejects.toMatchObject({
      code: 'RESULTS_FILE_UNREADABLE',
      exitCode: 2,
    });
    await writeFile(
      results,
      '\ufefforderKey,outcome,remoteOrderId,batch\nref.1.A,delivered,SIM-1,b1\nref.1.B,already-delivered,SIM-2,b0\nref.1.C,dead-lettered,,b1\n',
    );
    const prior = await readPriorResults(results, ORDER_RESULTS);
    expect(prior).toMatchObject({ rows: 3 });
    expect([...prior!.delivered.keys()]).toEqual(['ref.1.A', 'ref.1.B']);
    expect(prior!.delivered.get('ref.1.B')).toMatchObject({ remoteId: 'SIM-2', batch: 'b0' });
    expect(prior!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await readFile(results, 'utf8')).toContain('ref.1.C'); // read, never changed
  });
});
