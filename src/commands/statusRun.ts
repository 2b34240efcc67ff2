import { ExitCode } from '../errors.js';
import { queueStatus, resumeDelivery } from '../batches/queueStatus.js';
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

/** `bulkorder [accounts] resume`: clears the kind's breaker and resumes its queue. */
export async function runResume(kind: RecordKindName, ctx: CommandContext): Promise<number> {
  const services = await openServices(ctx.config, KINDS[kind]);
  try {
    process.stdout.write(await resumeDelivery(services));
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}
