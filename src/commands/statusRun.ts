import { ExitCode } from '../errors.js';
import { pauseQueue, queueStatus, resumeDelivery } from '../batches/queueStatus.js';
import { KINDS } from '../kinds/kindByName.js';
import { openServices } from '../services.js';
import type { CommandContext, RecordKindName, StatusFlags } from './options.js';

/** `bulkorder [accounts] status`. */
export async function runStatus(kind: RecordKindName, batchId: string | undefined, flags: StatusFlags, ctx: CommandContext): Promise<number> {
  const services = await openServices(ctx.config, KINDS[kind]);
  try {
    process.stdout.write(await queueStatus(services, { ...(batchId === undefined ? {} : { batchId }), limit: Number(flags.limit ?? 10), json: flags.json === true }));
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}

/** `bulkorder [accounts] resume`: clears a manual pause and the kind's breaker (requeueing its burst) and resumes its queue. */
export async function runResume(kind: RecordKindName, ctx: CommandContext): Promise<number> {
  const services = await openServices(ctx.config, KINDS[kind]);
  try {
    process.stdout.write(await resumeDelivery(services, ctx.logger));
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}

/** `bulkorder [accounts] pause`: pauses the kind's queue for every worker until `resume`. */
export async function runPause(kind: RecordKindName, ctx: CommandContext): Promise<number> {
  const services = await openServices(ctx.config, KINDS[kind]);
  try {
    process.stdout.write(await pauseQueue(services));
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}
