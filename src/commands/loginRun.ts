import { defined, ExitCode, UsageError } from '../errors.js';
import type { CommandContext, ConfigFlags } from './options.js';

/** Flags of `bulkorder login`. */
export interface LoginFlags extends ConfigFlags {
  email?: string;
  company?: string;
}

/**
 * `bulkorder login`: with a customerId, one login call (no Redis needed); with --email and
 * --company, the customerId comes from this environment's accounts ledger first.
 */
export async function runLogin(
  customerId: string | undefined,
  flags: LoginFlags,
  ctx: CommandContext,
): Promise<number> {
  const byIdentity = flags.email !== undefined || flags.company !== undefined;
  if (
    byIdentity === (customerId !== undefined) ||
    (byIdentity && (flags.email === undefined || flags.company === undefined))
  ) {
    throw new UsageError(
      'USAGE',
      'give either a customerId, or --email and --company (e.g. bulkorder login --email anna@example.nl --company <companyId UUID>).',
    );
  }
  let url: string;
  if (customerId !== undefined) {
    const { loginUrlByCustomerId } = await import('../accounts/loginUrlFor.js');
    url = await loginUrlByCustomerId(ctx.config, ctx.logger, customerId);
  } else {
    const { openLoginPortal } = await import('../accounts/openLoginPortal.js');
    const portal = await openLoginPortal(ctx.config, ctx.logger);
    try {
      // Checked above: without a customerId both flags are given.
      const email = defined(flags.email, '--email');
      const companyId = defined(flags.company, '--company');
      url = await portal.loginUrlFor({ email, companyId });
    } finally {
      await portal.close();
    }
  }
  ctx.stdout.write(`${url}\n`);
  return ExitCode.ok;
}
