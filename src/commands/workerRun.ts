import type { Config } from '../config.js';
import { redisPrefix } from '../config.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { startAccountDelivery, startBusinessDelivery } from '../worker/startWorkers.js';
import type { WorkerFlags } from './options.js';

/** `bulkorder worker`: runs until SIGTERM or SIGINT; returns the exit code. */
export async function runWorker(flags: WorkerFlags, ctx: { config: Config; logger: Logger }): Promise<number> {
  const concurrency = flags.concurrency === undefined ? ctx.config.delivery.concurrency : Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new UsageError('USAGE', `--concurrency must be a whole number from 1 to 1000, not '${flags.concurrency}'`);
  }
  const delivery = { ...ctx.config.delivery, concurrency };
  const { business, cafetariaplan } = ctx.config.credentials;
  const running: { close(): Promise<void> }[] = [];
  try {
    // Orders unless only Cafetariaplan credentials are set; with none at all, startBusinessDelivery names what is missing.
    if (business !== undefined || cafetariaplan === undefined) running.push(await startBusinessDelivery(ctx.config, ctx.logger, { prefix: redisPrefix(ctx.config), delivery }));
    // Employee accounts whenever Cafetariaplan credentials are set: a second BullMQ worker on the accounts queue.
    if (cafetariaplan !== undefined) running.push(await startAccountDelivery(ctx.config, ctx.logger, { prefix: redisPrefix(ctx.config, 'cafetariaplan'), delivery }));
  } catch (error) {
    await Promise.all(running.map((worker) => worker.close()));
    throw error;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      ctx.logger.info({ signal }, 'stopping: no new jobs; finishing requests in flight');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await Promise.all(running.map((worker) => worker.close()));
  return ExitCode.ok;
}
