import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ParkedStore } from '../../src/deadLetter/parkedStore.js';
import { retryDeadLetters } from '../../src/deadLetter/retryDeadLetters.js';
import { runCli } from '../helpers/runCli.js';
import { deliveryRig, HEADER, orderRow, settleBatch, type DeliveryRig } from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

function deadStore(r: DeliveryRig): ParkedStore {
  return new ParkedStore(r.services.redis, r.services.keys, r.services.ledger, 'dead');
}

async function cli(r: DeliveryRig, args: string[]): Promise<{ code: number | string; output: string }> {
  const { code, output } = await runCli(args, r.env);
  return { code, output };
}

describe('dead letters (real Redis, simulator, BullMQ workers, the real CLI)', () => {
  it('export writes the original columns plus error columns; the fixed file imports again and delivers only the fixed rows', async () => {
    rig = await deliveryRig('dl-export');
    const rows = [
      HEADER,
      orderRow('OK-1'),
      orderRow('OK-2'),
      orderRow('BAD-1', 5999),
      orderRow('BAD-2', 5999).replace(',Anna,', ',+Anna,'),
      orderRow('MULTI', 5002, 2),
      orderRow('MULTI', 5999, 1),
    ];
    const file = await rig.writeFile('orders.csv', rows.join('\n') + '\n');
    const first = await rig.importFile(file);
    await rig.startWorker({ concurrency: 2 }); // once the file is read: its chunks go at once
    expect(await settleBatch(rig, first.batchId)).toMatchObject({ delivered: 2, dead: 3 });

    const listed = await cli(rig, ['dead-letters', 'list', '--json', '--code', 'product_unknown']);
    expect(listed.code).toBe(0);
    const { records: json, ...head } = JSON.parse(listed.output.slice(listed.output.indexOf('{'))) as {
      kind: string;
      matched: number;
      records: { key: string; httpStatus: number; ledger: { state: string } }[];
    };
    expect(head).toMatchObject({ kind: 'orders', list: 'dead-letters', matched: 3, exitCode: 0, exitMeaning: 'ok' });
    expect(json.map((d) => d.key).sort()).toEqual(['ref.1001.BAD-1', 'ref.1001.BAD-2', 'ref.1001.MULTI']);
    expect(json.every((d) => d.httpStatus === 422 && d.ledger.state === 'dead')).toBe(true);

    const out = join(rig.dir, 'fix.csv');
    const exported = await cli(rig, ['dead-letters', 'export', '--out', out]);
    expect(exported.code).toBe(0);
    const text = await readFile(out, 'utf8');
    expect(text.startsWith('\uFEFF')).toBe(false); // the input had no BOM: neither has its export
    const lines = text.trimEnd().split('\r\n');
    expect(lines[0]).toBe(`${HEADER},reject_line,reject_status,reject_codes,reject_reasons,reject_key`);
    expect(lines).toHaveLength(5); // header + BAD-1 + BAD-2 + two rows of MULTI
    expect(lines.find((l) => l.includes('BAD-2'))).toContain(",'+Anna,"); // formula injection neutralised
    expect(lines.find((l) => l.startsWith('BAD-1,'))).toMatch(/,4,422,PRODUCT_UNKNOWN,/);

    // A person fixes BAD-1 and MULTI in a spreadsheet and leaves BAD-2 as it was.
    const fixed = text.replace(/^(BAD-1,.*?),5999,1,/m, '$1,5004,1,').replace(/^(MULTI,.*?),5999,1,/m, '$1,5004,1,');
    await writeFile(out, fixed);
    const again = await cli(rig, ['import', out, '--wait', '--timeout', '25']);
    // BAD-2, left as it was, is refused before with the same content: old news, not sent again (issue 33).
    expect(again.output).toMatch(/queued 2; skipped: 0 already delivered/);
    expect(again.output).toMatch(/already known: 1 refused before with the same content/);
    expect(again.output).toMatch(/2 delivered, 0 dead-lettered/);

    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(4); // OK-1, OK-2, then only the fixed BAD-1 and MULTI
    expect(counters.duplicateOrdersAccepted).toBe(0);
    const left = await deadStore(rig).select();
    expect(left.map((d) => d.record.key)).toEqual(['ref.1001.BAD-2']);
    expect(left[0]!.record.payload.recipient.address.firstName).toBe('+Anna');

    // The original file again: what was delivered as it is there is skipped; BAD-1 and MULTI were
    // delivered with the fixed product, so their original rows are conflicts (ORDER_REF_REUSED), not
    // skips; the unfixed order was refused before as it is: not sent again.
    const original = await rig.importFile(file);
    expect(original.counts).toMatchObject({ skippedDelivered: 2, conflicts: 2, skippedRefused: 1, enqueued: 0 });
  });

  it('exports dead letters of inputs with different columns to one file per column set, and of an expired batch in our column names', async () => {
    rig = await deliveryRig('dl-columns');
    const a = await rig.writeFile('a.csv', [HEADER, orderRow('A-1', 5999)].join('\n') + '\n');
    const b = await rig.writeFile('b.csv', [`${HEADER},Note`, `${orderRow('B-1', 5999)},call first`].join('\n') + '\n');
    const [ia, ib] = [await rig.importFile(a), await rig.importFile(b)];
    await rig.startWorker({ concurrency: 2 }); // once the files are read
    await settleBatch(rig, ia.batchId);
    await settleBatch(rig, ib.batchId);

    const out = join(rig.dir, 'dead.csv');
    expect((await cli(rig, ['dead-letters', 'export', '--out', out, '--delimiter', ';'])).code).toBe(0);
    const [one, two] = await Promise.all([
      readFile(join(rig.dir, 'dead-1.csv'), 'utf8'),
      readFile(join(rig.dir, 'dead-2.csv'), 'utf8'),
    ]);
    // The inputs had no BOM: neither has the export (the input's dialect; --delimiter chose ";").
    expect([one, two].map((t) => t.startsWith('\uFEFF'))).toEqual([false, false]);
    const headers = [one, two].map((t) => t.split('\r\n')[0]).sort();
    expect(headers).toEqual(
      [
        `${HEADER.replaceAll(',', ';')};Note;reject_line;reject_status;reject_codes;reject_reasons;reject_key`,
        `${HEADER.replaceAll(',', ';')};reject_line;reject_status;reject_codes;reject_reasons;reject_key`,
      ].sort(),
    );

    await rig.services.redis.del(rig.services.keys.batch(ib.batchId)); // the batch record expired; the dead letter is kept
    const only = join(rig.dir, 'b-only.csv');
    expect((await cli(rig, ['dead-letters', 'export', '--out', only, '--batch', ib.batchId])).code).toBe(0);
    const canonical = await readFile(only, 'utf8');
    expect(canonical.slice(1).split('\r\n')[0]).toBe(
      `${HEADER},reject_line,reject_status,reject_codes,reject_reasons,reject_key`,
    );
    expect(canonical).toContain('B-1,1001,Anna,de Vries');
  });

  it('exports a dead letter of a JSON order without orderRef as CSV rows that import again as one order', async () => {
    rig = await deliveryRig('dl-json');
    const order = {
      businessCustomerId: 1002,
      recipient: {
        address: {
          firstName: 'Lucas',
          lastName: 'van Dijk',
          street: 'Stratumsedijk',
          streetNumber: 27,
          postalCode: '5611 NB',
          city: 'Eindhoven',
          countryCode: 'NL',
        },
        languageCode: 'nl',
        email: 'lucas.vandijk@example.nl',
        telephoneNumber: '+31651234567',
      },
      products: [
        { productId: 5002, quantity: 1 },
        { productId: 5999, quantity: 2 },
      ],
    };
    const file = await rig.writeFile('orders.json', JSON.stringify([order]));
    const first = await rig.importFile(file);
    await rig.startWorker({ concurrency: 1 }); // once the file is read
    expect(await settleBatch(rig, first.batchId)).toMatchObject({ dead: 1 });
    const [dead] = await deadStore(rig).select();

    const out = join(rig.dir, 'json-fix.csv');
    const exported = await cli(rig, ['dead-letters', 'export', '--out', out]);
    expect(exported.output).toContain(
      '1 of them have no orderRef: a fixed row gets a new key, so keep its reject_key column (it links the row to the dead letter it replaces)',
    );
    const lines = (await readFile(out, 'utf8')).slice(1).trimEnd().split('\r\n');
    expect(lines).toHaveLength(3); // header and one row per product line
    expect(lines[1]).toMatch(
      /^DL-[0-9a-f]{16},1002,Lucas,van Dijk,Stratumsedijk,27,5611 NB,Eindhoven,NL,nl,lucas.vandijk@example.nl,'\+31651234567,5002,1,1,422,PRODUCT_UNKNOWN,/,
    );

    const again = await rig.importFile(out);
    expect(again.counts).toMatchObject({ orders: 1, valid: 1, rejected: 0, enqueued: 1 }); // not split into one order per row
    expect(await settleBatch(rig, again.batchId)).toMatchObject({ dead: 1 });
    // Refused again under its new key: the new dead letter replaces the one it was exported from (one open problem).
    const after = await deadStore(rig).select();
    expect(after.map((d) => d.record.key)).toEqual([expect.stringMatching(/^ref\.1002\.DL-/)]);
    expect(after[0]!.record.payload).toEqual(order);
    expect(await rig.services.batches.get(dead!.record.batchId)).toMatchObject({ dead: 0, movedOn: 1 });
  });

  it('retry sends dead letters again as they are once the server is fixed; purge forgets them; neither sends anything twice', async () => {
    rig = await deliveryRig('dl-retry', {
      faults: {
        script: [{ path: 'orders', status: 400, body: { code: 'UPSTREAM_BROKEN', message: 'catalogue offline' } }],
      },
    });
    const file = await rig.writeFile('r.csv', [HEADER, orderRow('R-1'), orderRow('R-2', 5999)].join('\n') + '\n');
    const imported = await rig.importFile(file);
    await rig.startWorker({ concurrency: 1 }); // once the file is read
    expect(await settleBatch(rig, imported.batchId)).toMatchObject({ delivered: 0, dead: 2 });

    const deps = rig.services.pipeline(rig.logger);
    const broken = await deadStore(rig).select({ code: 'UPSTREAM_BROKEN' });
    expect(broken).toHaveLength(1);
    const [retried] = await retryDeadLetters(broken, deps);
    expect(retried!.counts).toMatchObject({ orders: 1, enqueued: 1 });
    expect(await settleBatch(rig, retried!.batchId)).toMatchObject({ delivered: 1, dead: 0 });
    expect((await deadStore(rig).select()).map((d) => d.record.code)).toEqual(['PRODUCT_UNKNOWN']);
    expect(rig.simulator.counters()).toMatchObject({ ordersAccepted: 1, duplicateOrdersAccepted: 0 });

    const refused = await cli(rig, ['dead-letters', 'retry']);
    expect(refused.code).toBe(2);
    expect(refused.output).toMatch(/SELECTION_MISSING|pass --all/);
    const purged = await cli(rig, ['dead-letters', 'purge', '--status', '422']);
    expect(purged.output).toMatch(/purged 1 dead letter/);
    expect(await deadStore(rig).count()).toBe(0);
    expect((await rig.services.ledger.get('ref.1001.R-2'))?.state).toBe('dead');
  });
});
