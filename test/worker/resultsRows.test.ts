import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { followBatch } from '../../src/batches/followBatch.js';
import { ResultsRows, writeResults } from '../../src/batches/writeResults.js';
import { importAndFollow } from '../../src/importer/importAndFollow.js';
import { importFile } from '../../src/importer/importFile.js';
import type { OrderPayload, RecordItem } from '../../src/ingest/types.js';
import { ORDERS } from '../../src/kinds/orders.js';
import { createLogger, silentLogger } from '../../src/logger.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const REJECTED = 'REJ-1,1001,Anna,de Vries,Keizersgracht,12a,1015 CX,Amsterdam,NL,nl,not-an-email,+31612345678,5001,1';

describe('a results file made while its batch settles (ResultsRows)', () => {
  it('makes early only the rows that can no longer change, in file order, and the same file as made at the end', async () => {
    rig = await deliveryRig('results-rows');
    const rows = [HEADER, REJECTED];
    for (let i = 1; i <= 5; i++) rows.push(orderRow(`EARLY-${i}`));
    rows.push(orderRow('EARLY-BAD', 5999)); // refused 422: dead-lettered, which a person may send again
    for (let i = 6; i <= 8; i++) rows.push(orderRow(`EARLY-${i}`));
    const file = await rig.writeFile('early.csv', rows.join('\n') + '\n');
    const imported = await importFile(file, { keepItems: 20 }, rig.services.pipeline(silentLogger()));
    expect(imported.counts).toMatchObject({ valid: 9, rejected: 1, enqueued: 9 });
    const items = (await imported.kept!.records()) as RecordItem<OrderPayload>[];
    const target = { file, ingest: {}, batchId: imported.batchId, ledger: rig.services.ledger, kind: ORDERS };
    const early = await ResultsRows.open(target, { items });

    // Nothing delivered yet: the rejected row only; EARLY-1 is queued, and everything after it waits.
    expect(await early.early()).toBe(1);
    await rig.startWorker({ concurrency: 4 });
    const { settled } = await followBatch(rig.services.batches, imported.batchId, {
      pollMs: 100,
      timeoutMs: 25_000,
      out: devNull(),
    });
    expect(settled).toBe(true);
    // EARLY-1..5 delivered; the dead-lettered one stops it for good: the rows after it are made at the end.
    expect(await early.early()).toBe(5);
    expect(await early.early()).toBe(0);
    // As if a person had sent it again meanwhile and it was delivered: early() looks no more, the end reads it now.
    await rig.services.redis.hset(rig.services.keys.ledger('ref.1001.EARLY-BAD'), 's', 'delivered');
    expect(await early.early()).toBe(0);

    const madeEarly = await writeResults({ ...target, outPath: `${rig.dir}/early.results.csv` }, { rows: early });
    const madeAtEnd = await writeResults({ ...target, outPath: `${rig.dir}/end.results.csv` }, { items });
    expect(madeEarly).toEqual(madeAtEnd);
    expect(madeAtEnd.byOutcome).toEqual({ rejected: 1, delivered: 9 });
    const text = await readFile(`${rig.dir}/early.results.csv`, 'utf8');
    expect(text).toBe(await readFile(`${rig.dir}/end.results.csv`, 'utf8'));
    const refs = text
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0]?.replace('ref.1001.', ''));
    expect(refs).toEqual([
      'REJ-1',
      ...[1, 2, 3, 4, 5].map((i) => `EARLY-${i}`),
      'EARLY-BAD',
      'EARLY-6',
      'EARLY-7',
      'EARLY-8',
    ]);
    imported.kept!.dispose();
  }, 60_000);

  it('import --wait of a file longer than one round of early rows: every row once, in order, with its outcome', async () => {
    // 20 ms an answer at 20 in flight: the batch settles over several of --wait's reads, so rows are made early.
    rig = await deliveryRig('results-follow', { faults: { latencyMs: 20 } });
    const rows = [HEADER];
    for (let i = 1; i <= 700; i++) rows.push(i === 650 ? orderRow('FOLLOW-BAD', 5999) : orderRow(`FOLLOW-${i}`));
    const file = await rig.writeFile('follow.csv', rows.join('\n') + '\n');
    await rig.startWorker({ concurrency: 20 });
    let log = '';
    const logger = createLogger({
      level: 'debug',
      format: 'json',
      destination: new Writable({ write: (chunk: Buffer, _encoding, done) => ((log += chunk.toString()), done()) }),
    });
    const outcome = await importAndFollow(
      file,
      { force: false },
      { services: rig.services, logger },
      { wait: true, timeoutMs: 60_000, out: devNull() },
    );
    const early = log
      .split('\n')
      .filter((line) => line.includes('results rows made while the batch settles'))
      .map((line) => (JSON.parse(line) as { made: number }).made);
    expect(early.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(outcome.batch).toMatchObject({ delivered: 699, dead: 1, held: 0 });
    expect(outcome.results?.byOutcome).toEqual({ delivered: 699, 'dead-lettered': 1 });
    const lines = (await readFile(outcome.resultsPath!, 'utf8')).trim().split('\n').slice(1);
    expect(lines.map((line) => line.split(',')[0]?.replace('ref.1001.', ''))).toEqual(
      [...Array(700).keys()].map((i) => (i === 649 ? 'FOLLOW-BAD' : `FOLLOW-${i + 1}`)),
    );
    expect(lines.filter((line) => line.includes(',delivered,'))).toHaveLength(699);
    expect(lines[649]).toMatch(/^ref\.1001\.FOLLOW-BAD,FOLLOW-BAD,651,dead-lettered,,422,PRODUCT_UNKNOWN/);
    const counters = rig.simulator.counters();
    expect(counters.ordersAccepted).toBe(699);
    expect(counters.duplicateOrdersAccepted).toBe(0);
  }, 90_000);
});

function devNull(): NodeJS.WriteStream {
  return new Writable({ write: (_chunk, _encoding, done) => done() }) as unknown as NodeJS.WriteStream;
}
