import { ExitCode, UsageError } from '../errors.js';
import { KINDS } from '../kinds/kindByName.js';
import { acknowledge, openJson, openText, readOpen } from '../open/openList.js';
import { openServices } from '../services.js';
import { osUserName, printReport, type CommandContext, type ConfigFlags, type RecordKindName } from './options.js';

/** Flags of `open` and `open ack`. */
export interface OpenFlags extends ConfigFlags {
  json?: boolean;
  all?: boolean;
  by?: string;
  note?: string;
}

/** One `open` command as typed. */
export interface OpenRequest {
  /** Orders or accounts. */
  kind: RecordKindName;
  /** `ack`, or undefined to list. */
  ack: string | undefined;
  /** The ids to acknowledge. */
  ids: string[];
  flags: OpenFlags;
}

/** `bulkorder [accounts] open [ack <id>...]`: 0 when nothing is open, 4 when something is (after an ack: 0). */
export async function runOpen(request: OpenRequest, ctx: CommandContext): Promise<number> {
  const { kind, ack, ids, flags } = request;
  if (ack !== undefined && ack !== 'ack')
    throw new UsageError('USAGE', `open: unknown action "${ack}"; did you mean \`open ack ${ack} --note "..."\`?`);
  const note = flags.note?.trim() ?? '';
  if (ack === 'ack' && note === '')
    throw new UsageError('OPEN_ACK_NOTE_MISSING', 'open ack: say why with --note "..." (recorded with who decided)');
  if (ack === 'ack' && ids.length === 0) throw new UsageError('USAGE', 'open ack: name the ids to acknowledge');
  const services = await openServices(ctx.config, KINDS[kind], { allowEviction: true });
  const deps = { services, cli: services.kind.cli, now: Date.now() };
  try {
    if (ack === 'ack') {
      const by = flags.by ?? osUserName();
      const { acknowledged: taken, closed } = await acknowledge(deps, ids, { by, note });
      const missing = ids.filter((id) => !taken.includes(id));
      if (missing.length > 0 && taken.length === 0)
        throw new UsageError(
          'OPEN_ITEM_UNKNOWN',
          `open ack: not open: ${missing.join(', ')} (run \`${deps.cli} open\`)`,
        );
      const text =
        `acknowledged by ${by}: ${taken.join(', ')}\n` +
        (closed.length > 0
          ? `closed as \`${deps.cli} review duplicates ack\` closes them (off its list; who and why in their batch's history of fixes): ${closed.join(', ')}\n`
          : '') +
        (missing.length > 0 ? `not open (left alone): ${missing.join(', ')}\n` : '');
      return printReport(
        ctx.stdout,
        { text, json: { action: 'open ack', by, acknowledged: taken, closed, missing }, exitCode: ExitCode.ok },
        flags.json === true,
      );
    }
    const list = await readOpen(deps);
    const exitCode = list.total === 0 ? ExitCode.ok : ExitCode.needsAttention;
    const text = openText(list, {
      cli: deps.cli,
      timeZone: ctx.config.timeZone,
      perGroup: flags.all === true ? Number.MAX_SAFE_INTEGER : 5,
    });
    return printReport(
      ctx.stdout,
      { text, json: { kind: services.kind.name, ...openJson(list) }, exitCode },
      flags.json === true,
    );
  } finally {
    await services.close();
  }
}
