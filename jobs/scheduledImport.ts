import { Worker } from 'bullmq';
import type { Logger } from '../src/logger.js';
import { createRedis } from '../src/redis.js';
import { openServices } from '../src/services.js';
import type { DeliverySettings } from '../src/worker/deliverySettings.js';
import { runScheduledImport, type ScheduledImportResult } from '../src/schedule/runScheduledImport.js';
import { SCHEDULES_QUEUE, type ScheduledImportData } from '../src/schedule/scheduledImportJob.js';
import { DELIVER_ORDER } from './deliverOrder.js';

export interface ScheduledImportWorkerOptions {
  redisUrl: string;
  /** Key prefix, `bulkorder:<env>`. */
  prefix: string;
  env: string;
  delivery: DeliverySettings;
  logger: Logger;
  /** Told what each firing did (notifications: a schedule that found no file). */
  onResult?(result: ScheduledImportResult): void;
}

export interface ScheduledImportWorker {
  readonly worker: Worker<ScheduledImportData, ScheduledImportResult>;
  /** Lets an import in progress finish, then closes. */
  close(): Promise<void>;
}

/**
 * The BullMQ worker of the `schedules` queue: runs in every `bulkorder worker` process beside the
 * delivery worker, one import at a time per process. BullMQ hands each firing to one of them.
 */
export async function startScheduledImportWorker(options: ScheduledImportWorkerOptions): Promise<ScheduledImportWorker> {
  const services = await openServices({ redisUrl: options.redisUrl, prefix: options.prefix, delivery: options.delivery, role: 'worker' });
  const blocking = createRedis(options.redisUrl, 'worker');
  const worker = new Worker<ScheduledImportData, ScheduledImportResult>(
    SCHEDULES_QUEUE,
    (job) =>
      runScheduledImport(job.data, {
        queue: services.queue,
        ledger: services.ledger,
        batches: services.batches,
        env: options.env,
        logger: options.logger.child({ job: job.id }),
        jobOptions: services.jobOptions,
        jobName: DELIVER_ORDER,
      }),
    { connection: blocking, prefix: options.prefix, concurrency: 1 },
  );
  worker.on('error', (error) => options.logger.error({ err: error }, 'scheduled-import worker error (Redis?); BullMQ reconnects on its own'));
  if (options.onResult !== undefined) worker.on('completed', (_job, result) => options.onResult?.(result));
  worker.on('failed', (job, error) => options.logger.error({ schedule: job?.data.schedule, err: error }, 'scheduled import failed'));
  let closing: Promise<void> | undefined;
  return {
    worker,
    close() {
      closing ??= (async () => {
        await worker.close();
        blocking.disconnect();
        await services.close();
      })();
      return closing;
    },
  };
}
