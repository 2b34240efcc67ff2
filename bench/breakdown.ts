/**
 * Issue 25's breakdown: milliseconds per 1,000 rows for each step of `import` (and so of
 * `validate`, its first seven steps), ours beside the bare loop, on the same seeded file, in one
 * process. Each step runs over the whole file on its own, its input made by the step before and
 * held in memory, and is timed alone (CPU time of this process), so steps do not blur into each other
 * and the sum is the whole: parse, columns (cells to fields), fields (every check but the phone), phone, group
 * (the unit and its order key), spill (encode, temp files, decode), assemble (orders from
 * units), pack (job records and payloads), reserve (the ledger's Lua script), addBulk and
 * confirm. Redis is a private redis-server (bench/lib/benchRedis.ts), stopped at the end.
 *
 *   node dist/bench/breakdown.js [rows=100000] [runs=3]     prints a markdown table (medians of `runs`)
 *
 * The bare loop is bench/baselines/bareRows.ts and bareImport.ts step by step: csv-parse, the
 * header's names as fields, the row check, addBulk of one job per row.
 */
import { createReadStream, realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { Queue } from 'bullmq';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { openServices } from '../src/services.js';
import { ORDERS } from '../src/kinds/orders.js';
import { chunkJob, toChunkRecord } from '../src/ledger/jobData.js';
import { fingerprintOf } from '../src/ledger/fingerprint.js';
import { chunkJobId } from '../src/queues.js';
import { readCsvRecords, type CsvBadRecord, type CsvRecord } from '../src/ingest/readCsvRecords.js';
import { ORDER_FIELDS } from '../src/ingest/orderFields.js';
import { validateRow, type CheckedRow, type RowText } from '../src/ingest/validateRow.js';
import { acceptRow, e164Verdict } from '../src/ingest/acceptRow.js';
import { unitOf, type OrderUnit } from '../src/ingest/orderUnit.js';
import { createUnitStore } from '../src/ingest/unitStore.js';
import { ORDER_SCHEMA } from '../src/ingest/openOrderSource.js';
import { orderGroupLimit } from '../src/ingest/orderGroupLimit.js';
import { assembleOrders } from '../src/ingest/assembleOrders.js';
import { DEFAULT_MAX_LINES_PER_ORDER } from '../src/ingest/orderGroupLimit.js';
import { resolveColumns } from '../src/ingest/resolveColumns.js';
import { ORDER_COLUMNS } from '../src/ingest/orderColumns.js';
import type { IngestItem, OrderPayload, ValidRecord } from '../src/ingest/types.js';
import { barePayload } from './baselines/bareRows.js';
import { orderFile } from './lib/benchData.js';
import { startBenchRedis, type BenchRedis } from './lib/benchRedis.js';
import { benchEnv } from './importBench.js';
import { load, median } from './lib/benchStats.js';

export const STEPS = [
  'parse',
  'columns',
  'fields',
  'phone',
  'group',
  'spill',
  'assemble',
  'pack',
  'reserve',
  'addBulk',
  'confirm',
] as const;
type Step = (typeof STEPS)[number];
/** Milliseconds per step for the whole file; absent: the side has no such step. */
type Times = Partial<Record<Step, number>>;

/** Steps `validate` runs (the rest is import's). */
const VALIDATE_STEPS: readonly Step[] = ['parse', 'columns', 'fields', 'phone', 'group', 'spill', 'assemble'];
const CHUNK = 500;
const PER_JOB = 10;
const KIB = 1024;

/**
 * Adds the step's CPU time (user + system, this process) to `times`, in ms: on a shared machine the
 * wall time of a step swings 2x with the neighbours' load, its CPU time far less. For reserve,
 * addBulk and confirm it is this process's side only (building commands, reading answers), not Redis's.
 */
async function timed<T>(times: Times, step: Step, run: () => Promise<T> | T): Promise<T> {
  const start = process.cpuUsage();
  const out = await run();
  const used = process.cpuUsage(start);
  times[step] = (times[step] ?? 0) + (used.user + used.system) / 1000;
  return out;
}

/** The accept path's phone check alone: + and digits, the verdict cache, libphonenumber on a miss. */
function phoneAccept(texts: readonly RowText[]): number {
  let valid = 0;
  for (const text of texts) if (e164Verdict(text.telephoneNumber ?? '')) valid++;
  return valid;
}

/** validateRow's phone check alone: libphonenumber's full parse of every number. */
function phoneOnly(texts: readonly RowText[]): number {
  let valid = 0;
  for (const text of texts) {
    const parsed = parsePhoneNumberFromString(text.telephoneNumber ?? '');
    if (parsed?.isPossible() === true && parsed.isValid()) valid++;
  }
  return valid;
}

async function ours(
  file: string,
  redis: BenchRedis,
): Promise<{ times: Times; before: Times; rows: number; orders: number }> {
  const times: Times = {};
  const before: Times = {};
  const records = await timed(times, 'parse', async () => {
    const all: (CsvRecord | CsvBadRecord)[] = [];
    for await (const record of readCsvRecords(file, { delimiter: ',' })) all.push(record);
    return all;
  });
  const header = records.shift()!;
  const plan = resolveColumns(file, header.values, undefined, ORDER_COLUMNS);
  const texts = await timed(times, 'columns', () =>
    records.map((record) => {
      const text: RowText = {};
      for (const field of ORDER_FIELDS) {
        const index = plan.fieldIndex[field];
        if (index !== undefined) text[field] = record.values[index] ?? '';
      }
      return text;
    }),
  );
  // fields + phone are the product's row check; the phone's share is timed alone and taken out.
  // `before`: the same two steps as they were before the accept path (validateRow for every row).
  await timed(before, 'fields', () => texts.map((text, i) => validateRow(records[i]!.line, text)));
  await timed(before, 'phone', () => phoneOnly(texts));
  before.fields! -= before.phone!;
  const checked = await timed(times, 'fields', () =>
    texts.map((text, i): CheckedRow => acceptRow(records[i]!.line, text) ?? validateRow(records[i]!.line, text)),
  );
  await timed(times, 'phone', () => phoneAccept(texts));
  times.fields! -= times.phone!;
  const units = await timed(times, 'group', () =>
    checked.map((row, i) => unitOf([{ ...row, cells: records[i]!.values }], false, [])),
  );
  const size = (await stat(file)).size;
  const bucketCount = size <= KIB * KIB ? 1 : Math.min(1024, Math.max(2, Math.ceil(size / (128 * KIB))));
  const buckets = await timed(times, 'spill', async () => {
    const store = await createUnitStore<OrderUnit>({
      codec: ORDER_SCHEMA.codec(plan),
      bucketCount,
      limit: orderGroupLimit(DEFAULT_MAX_LINES_PER_ORDER),
    });
    try {
      for (const unit of units) await store.add(unit);
      const all: OrderUnit[][] = [];
      for await (const bucket of store.buckets()) all.push(bucket);
      return all;
    } finally {
      await store.dispose();
    }
  });
  const context = { file, columns: plan.columns, maxLinesPerOrder: DEFAULT_MAX_LINES_PER_ORDER };
  const items = await timed(times, 'assemble', () => buckets.flatMap((bucket) => [...assembleOrders(bucket, context)]));
  const valid = items.filter((item): item is ValidRecord<OrderPayload> & IngestItem => item.kind === 'valid');

  await redis.reset();
  const config = loadConfig({ env: {}, overrides: benchEnv(redis.url) });
  const services = await openServices(config, ORDERS);
  const deps = services.pipeline(createLogger({ level: 'silent' }));
  const layout = ORDERS.payloadCodec?.version;
  let chunks = 0;
  try {
    for (let at = 0; at < valid.length; at += CHUNK) {
      const orders = valid.slice(at, at + CHUNK);
      const packed = await timed(times, 'pack', () => {
        const groups: ValidRecord<OrderPayload>[][] = [];
        for (let i = 0; i < orders.length; i += PER_JOB) groups.push(orders.slice(i, i + PER_JOB));
        const ids = groups.map(() => chunkJobId('b-bench', ++chunks));
        const records = groups.map((group) => group.map((order) => toChunkRecord(order, plan.columns, ORDERS)));
        const reserve = groups.map((group, c) =>
          group.map((order, i) => ({
            orderKey: order.key,
            fingerprint: fingerprintOf(order.payload),
            record: records[c]![i]!,
          })),
        );
        return { ids, records, reserve };
      });
      const reserved = await timed(times, 'reserve', () =>
        deps.ledger.reserveChunks(packed.reserve, packed.ids, { name: ORDERS.jobName, layout }, { batchId: 'b-bench' }),
      );
      const jobs = packed.records.map((group, c) => ({
        name: ORDERS.jobName,
        data: chunkJob(
          'b-bench',
          group.filter((_, i) => reserved[c]![i]!.outcome === 'reserved'),
          layout,
        ),
        opts: { ...deps.jobOptions, jobId: packed.ids[c]! },
      }));
      await timed(times, 'addBulk', () => deps.queue.addBulk(jobs));
      await timed(times, 'confirm', () =>
        deps.ledger.confirmChunks(
          jobs.map((job) => ({ chunkId: job.opts.jobId, orderKeys: job.data.records.map((record) => record.key) })),
          'b-bench',
        ),
      );
    }
  } finally {
    await services.close();
  }
  return { times, before, rows: records.length, orders: valid.length };
}

async function bare(file: string, redis: BenchRedis): Promise<{ times: Times; rows: number }> {
  const times: Times = {};
  const records = await timed(times, 'parse', async () => {
    const all: string[][] = [];
    const parser = createReadStream(file).pipe(parse({ bom: true, relax_column_count: true }));
    for await (const record of parser as AsyncIterable<string[]>) all.push(record);
    return all;
  });
  const header = records.shift()!;
  const texts = await timed(times, 'columns', () =>
    records.map((record) => {
      const text: RowText = {};
      header.forEach((name, i) => ((text as Record<string, string | undefined>)[name] = record[i]));
      return text;
    }),
  );
  const checked = await timed(times, 'fields', () => texts.map((text, i) => validateRow(i + 2, text)));
  await timed(times, 'phone', () => phoneOnly(texts));
  times.fields! -= times.phone!;

  await redis.reset();
  const connection = redis.client.duplicate();
  const queue = new Queue('bare-orders', { connection, prefix: 'bare' });
  const options = { attempts: 15, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: true };
  try {
    for (let at = 0; at < checked.length; at += CHUNK) {
      const jobs = await timed(times, 'pack', () =>
        checked.slice(at, at + CHUNK).flatMap((row, i) =>
          row.value === undefined
            ? []
            : [
                {
                  name: 'deliver-order',
                  data: { line: row.line, payload: barePayload(row.value), cells: [records[at + i]!] },
                  opts: options,
                },
              ],
        ),
      );
      await timed(times, 'addBulk', () => queue.addBulk(jobs));
    }
  } finally {
    await queue.close();
    connection.disconnect();
  }
  return { times, rows: records.length };
}

export interface BreakdownFigures {
  rows: number;
  orders: number;
  load: number;
  /** Medians over the runs, in milliseconds per 1,000 rows. */
  ours: Times;
  /** Ours with validateRow on every row (before the accept path): fields and phone only, the rest is ours'. */
  before: Times;
  bare: Times;
}

export async function breakdown(rows: number, runs: number): Promise<BreakdownFigures> {
  const file = await orderFile(rows);
  const redis = await startBenchRedis();
  const loadNow = load();
  const oursRuns: Times[] = [];
  const beforeRuns: Times[] = [];
  const bareRuns: Times[] = [];
  let orders = 0;
  try {
    for (let run = 0; run < runs; run++) {
      const o = await ours(file, redis);
      orders = o.orders;
      oursRuns.push(perThousand(o.times, o.rows));
      beforeRuns.push(perThousand(o.before, o.rows));
      const b = await bare(file, redis);
      bareRuns.push(perThousand(b.times, b.rows));
    }
  } finally {
    await redis.stop();
  }
  return { rows, orders, load: loadNow, ours: medians(oursRuns), before: medians(beforeRuns), bare: medians(bareRuns) };
}

function perThousand(times: Times, rows: number): Times {
  const out: Times = {};
  for (const step of STEPS) if (times[step] !== undefined) out[step] = (times[step] * 1000) / rows;
  return out;
}

function medians(runs: readonly Times[]): Times {
  const out: Times = {};
  for (const step of STEPS) {
    const values = runs.flatMap((run) => (run[step] === undefined ? [] : [run[step]]));
    if (values.length > 0) out[step] = median(values);
  }
  return out;
}

const sum = (times: Times, steps: readonly Step[]): number =>
  steps.reduce((total, step) => total + (times[step] ?? 0), 0);

/** The markdown table BENCHMARKS.md keeps. */
export function breakdownTable(f: BreakdownFigures): string {
  const ms = (value: number | undefined): string => (value === undefined ? '-' : value.toFixed(2));
  const before: Times = { ...f.ours, ...f.before };
  const lines = [
    '| step | ours (CPU ms per 1,000 rows) | ours before the accept path | bare loop | ours - bare |',
    '|---|---|---|---|---|',
  ];
  for (const step of STEPS) {
    const o = f.ours[step];
    const b = f.bare[step];
    const was = f.before[step] === undefined ? '(same)' : ms(f.before[step]);
    lines.push(`| ${step} | ${ms(o)} | ${was} | ${ms(b)} | ${ms((o ?? 0) - (b ?? 0))} |`);
  }
  const total = (name: string, detail: string, steps: readonly Step[]): string => {
    const o = sum(f.ours, steps);
    const b = sum(f.bare, steps);
    return `| **${name}** ${detail} | **${ms(o)}** | ${ms(sum(before, steps))} | **${ms(b)}** | ${ms(o - b)} (${(b / o).toFixed(2)}x) |`;
  };
  lines.push(total('validate', '(parse .. assemble)', VALIDATE_STEPS), total('import', '(every step)', STEPS));
  return lines.join('\n');
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rows = Number(process.argv[2] ?? 100_000);
  const runs = Number(process.argv[3] ?? 3);
  const figures = await breakdown(rows, runs);
  process.stdout.write(
    `${rows.toLocaleString('en-US')} rows (${figures.orders.toLocaleString('en-US')} orders), medians of ${runs}, load ${figures.load} at the start\n\n`,
  );
  process.stdout.write(breakdownTable(figures) + '\n');
}
