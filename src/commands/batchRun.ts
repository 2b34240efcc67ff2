import { ExitCode } from '../errors.js';
import { KINDS } from '../kinds/kindByName.js';
import { openServices } from '../services.js';
import { actOnBatch, describeBatchShow, showBatch } from '../services/batchControl.js';
import type { CommandContext, ConfigFlags, RecordKindName } from './options.js';

/** Flags of `batch show|cancel|release`. */
export interface BatchFlags extends ConfigFlags {
  json?: boolean;
  why?: string;
  by?: string;
}

/** One `batch` command as typed. */
export interface BatchRequest {
  /** Orders or accounts. */
  kind: RecordKindName;
  action: 'show' | 'cancel' | 'release';
  /** The batch it acts on. */
  batchId: string;
  flags: BatchFlags;
}

/** `bulkorder [accounts] batch show|cancel|release <batch>`. */
export async function runBatch(request: BatchRequest, ctx: CommandContext): Promise<number> {
  const { kind, action, batchId, flags } = request;
  const services = await openServices(ctx.config, KINDS[kind]);
  try {
    const shown =
      action === 'show'
        ? await showBatch(services, batchId)
        : await actOnBatch(services, batchId, action, {
            ...(flags.by === undefined ? {} : { by: flags.by }),
            ...(flags.why === undefined ? {} : { why: flags.why }),
          });
    ctx.stdout.write(
      flags.json === true
        ? JSON.stringify(shown, null, 2) + '\n'
        : describeBatchShow(shown, services.kind.cli, ctx.config.timeZone),
    );
    return ExitCode.ok;
  } finally {
    await services.close();
  }
}
