import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPANY } from '../helpers/deliveryRig.js';
import { openAccountSource } from '../../src/ingest/openAccountSource.js';
import type { AccountPayload } from '../../src/ingest/accountColumns.js';
import { accountKey } from '../../src/ingest/accountKey.js';
import type { IngestOptions } from '../../src/ingest/openRecordSource.js';
import type { RecordItem, RejectedRecord, ValidRecord } from '../../src/ingest/types.js';
import { FileRefusedError, UsageError } from '../../src/errors.js';
import { validateFile } from '../../src/ingest/validateFile.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { samplesDir } from '../../src/paths.js';
import { tempDir } from '../ingest/ingestHelpers.js';

const HEADER = 'email,firstName,lastName,isoLanguageCode,companyId';

async function readAll(file: string, options: IngestOptions = {}): Promise<RecordItem<AccountPayload>[]> {
  const source = await openAccountSource(file, options);
  const items: RecordItem<AccountPayload>[] = [];
  for await (const item of source.items()) items.push(item);
  return items.sort((a, b) => a.lines[0]! - b.lines[0]!);
}
const valid = (items: RecordItem<AccountPayload>[]) =>
  items.filter((i): i is ValidRecord<AccountPayload> => i.kind === 'valid');
const rejected = (items: RecordItem<AccountPayload>[]) =>
  items.filter((i): i is RejectedRecord => i.kind === 'rejected');

describe('employee files through the shared ingest machinery', () => {
  it('reads the CSV, JSON and NDJSON samples into API-shaped accounts with stable keys', async () => {
    const csv = await readAll(join(samplesDir, 'employees.csv'));
    expect(valid(csv)).toHaveLength(5);
    const dirk = valid(csv).find((i) => i.payload.firstName === 'Dirk')!;
    // Upper-case language code and companyId are normalised, and the normalisation is noted.
    expect(dirk.payload).toEqual({
      email: 'dirk.peeters@example.be',
      firstName: 'Dirk',
      lastName: 'Peeters',
      isoLanguageCode: 'nl',
      companyId: COMPANY,
    });
    expect(dirk.notes.join(' ')).toMatch(/isoLanguageCode 'NL' -> 'nl'.*companyId written in lower case/);
    expect(dirk.key).toBe(accountKey(COMPANY, 'Dirk.Peeters@example.be'));
    expect(dirk.key).toMatch(/^acct\.3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01\.[0-9a-f]{32}$/);
    expect(valid(await readAll(join(samplesDir, 'employees.ndjson')))).toHaveLength(2);
    expect(valid(await readAll(join(samplesDir, 'employees.json')))).toHaveLength(2);
  });

  it('reports every problem of a row with line, column and masked value, and rejects a second row of one employee', async () => {
    const items = await readAll(join(samplesDir, 'employees-mistakes.csv'));
    expect(valid(items).map((i) => i.lines)).toEqual([[2]]);
    const errors = rejected(items).flatMap((i) => i.errors.map((e) => `${e.line} ${e.column} ${e.code}`));
    expect(errors).toEqual([
      '3 email EMAIL_INVALID',
      '4 lastName FIELD_REQUIRED',
      '4 isoLanguageCode LANGUAGE_CODE_INVALID',
      '5 companyId COMPANY_ID_INVALID',
      '6 email DUPLICATE_ACCOUNT',
    ]);
    const all = rejected(items).flatMap((i) => i.errors);
    expect(all.find((e) => e.code === 'LANGUAGE_CODE_INVALID')?.message).toMatch(/Use just the language: 'nl'/);
    expect(all.find((e) => e.code === 'COMPANY_ID_INVALID')?.message).toMatch(/Leave out the braces/);
    expect(all.find((e) => e.code === 'DUPLICATE_ACCOUNT')?.message).toMatch(/also on line 2/);
    expect(all.find((e) => e.code === 'EMAIL_INVALID')?.value).toBe('n***'); // personal data masked
  });

  it('finds a duplicate employee across spill buckets of a large file', async () => {
    const t = await tempDir();
    try {
      const rows = [HEADER];
      for (let i = 1; i <= 400; i++) rows.push(`e${i}@example.nl,E${i},Employee,nl,${COMPANY}`);
      rows.push(`E7@Example.nl,Seven,Again,en,${COMPANY}`);
      const file = await t.file('big.csv', rows.join('\n') + '\n');
      const items = await readAll(file, { spillThresholdBytes: 1, bucketBytes: 1024 });
      expect(valid(items)).toHaveLength(400);
      expect(rejected(items).map((i) => [i.lines[0], i.errors[0]?.code])).toEqual([[402, 'DUPLICATE_ACCOUNT']]);
    } finally {
      await t.cleanup();
    }
  });

  it('refuses a file without the account columns, naming the missing ones and the closest headers', async () => {
    const t = await tempDir();
    try {
      const file = await t.file('x.csv', 'Mail,Voornaam,lastName,taal\na@b.nl,A,B,nl\n');
      const error = await openAccountSource(file).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FileRefusedError);
      expect((error as FileRefusedError).message).toMatch(
        /missing required columns: email \(closest header: "Mail"\), firstName \(closest header: "Voornaam"\), isoLanguageCode \(closest header: "taal"\), companyId/,
      );
      // An order file is not an employee file.
      const orders = await openAccountSource(join(samplesDir, 'gift-orders.csv')).catch((e: unknown) => e);
      expect((orders as FileRefusedError).code).toBe('COLUMNS_MISSING');
    } finally {
      await t.cleanup();
    }
  });

  it('maps other column names with --map against the account fields, and refuses order fields there', async () => {
    const t = await tempDir();
    try {
      const file = await t.file(
        'dutch.csv',
        `E-mailadres;Voornaam;Achternaam;Taal;Bedrijf\nanna@example.nl;Anna;Jansen;nl;${COMPANY}\n`,
      );
      const mapping = {
        'E-mailadres': 'email',
        Voornaam: 'firstName',
        Achternaam: 'lastName',
        Taal: 'isoLanguageCode',
        Bedrijf: 'companyId',
      };
      expect(valid(await readAll(file, { mapping }))).toHaveLength(1);
      await expect(openAccountSource(file, { mapping: { Straat: 'street' } })).rejects.toBeInstanceOf(UsageError);
    } finally {
      await t.cleanup();
    }
  });

  it('takes JSON accounts as flat objects: strings only, other keys left out and reported', async () => {
    const t = await tempDir();
    try {
      const file = await t.file(
        'e.ndjson',
        [
          JSON.stringify({
            email: 'a@example.nl',
            firstName: 'A',
            lastName: 'B',
            isoLanguageCode: 'nl',
            companyId: COMPANY,
            employeeNo: 17,
          }),
          JSON.stringify({
            email: 'b@example.nl',
            firstName: 12,
            lastName: 'B',
            isoLanguageCode: 'nl',
            companyId: COMPANY,
          }),
          '[1]',
          '{"email": ',
        ].join('\n') + '\n',
      );
      const source = await openAccountSource(file);
      const items: RecordItem<AccountPayload>[] = [];
      for await (const item of source.items()) items.push(item);
      expect(items.filter((i) => i.kind === 'valid')).toHaveLength(1);
      expect(source.ignoredColumns()).toEqual(['employeeNo']);
      expect(
        rejected(items)
          .flatMap((i) => i.errors.map((e) => e.code))
          .sort(),
      ).toEqual(['FIELD_TYPE', 'JSON_SYNTAX', 'NOT_AN_ACCOUNT']);
    } finally {
      await t.cleanup();
    }
  });

  it('leaves order files reading exactly as before (the validate dry run still takes orders)', async () => {
    const result = await validateFile(
      join(samplesDir, 'gift-orders.csv'),
      { out: join(samplesDir, 'never-written.rejects.csv') },
      ORDERS,
    );
    expect(result.summary.toJSON()).toMatchObject({ orders: 20, valid: 20, rejected: 0 });
  });
});
