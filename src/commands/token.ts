/**
 * `bulkorder token --check`: proves the configured API credentials at the token endpoint,
 * without ever printing a token.
 */
import type { Command } from 'commander';
import { type CommandIo, runAction, withConfigFlags, withExamples, type ConfigFlags } from './options.js';

interface TokenFlags extends ConfigFlags {
  check?: boolean;
  json?: boolean;
}

/** Declares the command; undici and the token code load only when it runs. */
export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('token')
    .description('Check the OAuth2 client credentials of each configured API (the token is never printed)')
    .option(
      '--check',
      'request a fresh token for each API whose credentials are configured and report OK or why not (what `bulkorder token` does; kept for scripts)',
    )
    .option('--json', 'print the results as JSON');
  withExamples(
    command,
    ['bulkorder token --config-file .env', 'bulkorder token --json'],
    'Exit codes: 0 every API OK; 2 credentials refused or configuration incomplete; 5 token endpoint unreachable.',
  );
  withConfigFlags(command).action((flags: TokenFlags) =>
    runAction(
      io,
      flags,
      { load: () => import('../delivery/checkCredentials.js') },
      async ({ checkCredentials, checkExitCode }, context) => {
        const checks = await checkCredentials(context.config, context.logger);
        if (flags.json === true) {
          io.stdout.write(`${JSON.stringify({ env: context.config.env, checks }, null, 2)}\n`);
        } else {
          for (const c of checks) {
            const detail = c.ok ? `token issued, valid ${c.lifetimeSeconds} s` : `${c.code}: ${c.reason}`;
            io.stdout.write(`${c.api.padEnd(14)} ${c.ok ? 'OK    ' : 'FAILED'} ${detail} (${c.tokenUrl})\n`);
          }
        }
        return checkExitCode(checks);
      },
    ),
  );
}
