import { availableParallelism } from 'node:os';
import { piscina } from '../cjsPackages.js';
import type { CsvBadRecord, CsvRecord } from './readCsvRecords.js';
import type { ColumnPlan } from './resolveColumns.js';
import type { EncodedUnits } from './unitStore.js';
import type { RowRules } from './validateRow.js';

/**
 * Threads by default, at most: each costs ~35-40 MB at the peak (its own isolate with the phone
 * metadata), and one keeps `validate` of 1,000,000 rows at 238 MB, under the 250 MB budget; two would not.
 */
const MAX_DEFAULT_THREADS = 1;
/**
 * Cores below which no thread is started by default. On the 2-core benchmark machine, shared with
 * other work, a thread gave no faster run (200,000 rows, 3 pairs: 12.1-16.6 s with, 12.3-16.2 s
 * without) for 12% more CPU and 20-37 MB more peak; it pays only with a core to spare.
 */
const MIN_CORES_FOR_THREADS = 4;
/** Young generation of each thread, in MB (see createUnitPool). */
const YOUNG_GENERATION_MB = 8;
/** Records per task: large enough that messaging is a small share, small enough to keep every thread fed. */
const BATCH_RECORDS = 512;

/** Validation threads for a large CSV file by default: none below 4 cores (the main thread parses), else 1 (memory). */
export function defaultIngestThreads(cores = availableParallelism()): number {
  return cores < MIN_CORES_FOR_THREADS ? 0 : Math.min(MAX_DEFAULT_THREADS, cores - 1);
}

/** Record kinds whose rows can be validated in a thread (unitThread.ts imports each). */
export type ThreadedSchema = 'orders';

/** One batch of records for a thread. */
export interface UnitTask {
  schema: ThreadedSchema;
  plan: ColumnPlan;
  rules: RowRules;
  bucketCount: number;
  records: (CsvRecord | CsvBadRecord)[];
}

/** Options for createUnitPool. */
export interface UnitPoolOptions {
  /** Worker threads (1 or more). */
  threads: number;
  /** The record kind. */
  schema: ThreadedSchema;
  plan: ColumnPlan;
  rules: RowRules;
  bucketCount: number;
}

/** Worker threads that validate and encode CSV records while the main thread parses; see encode(). */
export interface UnitPool {
  /**
   * The spill lines of `records`, a batch at a time, in the records' order: batches are
   * validated in parallel but handed back in the order they were sent, so the spill files
   * (and every report made from them) are the same as with no threads.
   */
  encode(records: AsyncIterable<CsvRecord | CsvBadRecord>): AsyncGenerator<EncodedUnits>;
  /** Stops the threads; safe to call more than once. */
  close(): Promise<void>;
}

/** The worker entry beside this module: unitThread.js when built, unitThread.ts under tsx or vitest (loaded through tsx). */
function threadEntry(): { filename: string; execArgv: string[] } {
  const typescript = import.meta.url.endsWith('.ts');
  return {
    filename: new URL(typescript ? './unitThread.ts' : './unitThread.js', import.meta.url).href,
    execArgv: typescript ? ['--import', 'tsx'] : [],
  };
}

export function createUnitPool(options: UnitPoolOptions): UnitPool {
  const entry = threadEntry();
  const { Piscina } = piscina();
  const pool = new Piscina<UnitTask, EncodedUnits>({
    filename: entry.filename,
    execArgv: entry.execArgv,
    minThreads: options.threads,
    maxThreads: options.threads,
    // encode() keeps at most two tasks per thread under way, so this queue stays short.
    maxQueue: 'auto',
    // A smaller young generation than V8's default (48 MB) keeps each thread ~40 MB lighter at the
    // peak, at a few more scavenges (a 200,000-row validate: 217 MB instead of 256 MB).
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
  let closed: Promise<void> | undefined;
  // Tasks sent and not yet answered: close() waits for them, since a thread's answer that arrives
  // after destroy() finds no task to go to and piscina emits it as an 'error' nobody listens to
  // (uncaught: a file refused while a batch was under way took the process down).
  const underWay = new Set<Promise<EncodedUnits>>();
  const task = (records: (CsvRecord | CsvBadRecord)[]): Promise<EncodedUnits> => {
    const run = pool.run({
      schema: options.schema,
      plan: options.plan,
      rules: options.rules,
      bucketCount: options.bucketCount,
      records,
    });
    underWay.add(run);
    const answered = () => underWay.delete(run);
    run.then(answered, answered); // awaited in order by encode; not unhandled when the reader stops early
    return run;
  };
  return {
    encode: async function* (records) {
      const window = options.threads * 2;
      const running: Promise<EncodedUnits>[] = [];
      let batch: (CsvRecord | CsvBadRecord)[] = [];
      for await (const record of records) {
        batch.push(record);
        if (batch.length < BATCH_RECORDS) continue;
        running.push(task(batch));
        batch = [];
        // A full window: the oldest is awaited (splices one when full, none before).
        for (const oldest of running.splice(0, running.length - window + 1)) yield await oldest;
      }
      if (batch.length > 0) running.push(task(batch));
      for (const rest of running.splice(0)) yield await rest;
    },
    close: () => (closed ??= Promise.allSettled(underWay).then(() => pool.destroy())),
  };
}
