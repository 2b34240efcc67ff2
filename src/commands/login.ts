/**
 * `bulkorder login <customerId>`: asks the Cafetariaplan API for a one-time login URL and
 * prints it on stdout (and nothing else there, so it can be piped).
 */
import type { Command } from 'commander';
import type { SetExitCode } from './index.js';
import { loadCommandContext, withConfigFlags, type ConfigFlags } from './context.js';

/** Declares the command; the client loads only when it runs. */
export function register(program: Command, setExitCode: SetExitCode): void {
  const command = program
    .command('login')
    .argument('<customerId>', 'the customerId returned when the employee account was created')
    .description('Print a one-time Cafetariaplan login URL for an employee account')
    .addHelpText('after', '\nExit codes: 0 URL printed; 2 configuration or credentials refused; 4 the API refused the request\n(e.g. unknown customerId); 5 API or token endpoint unavailable.');
  withConfigFlags(command).action(async (customerId: string, flags: ConfigFlags) => {
    const [{ requestLoginUrl }, context] = await Promise.all([import('../delivery/requestLoginUrl.js'), loadCommandContext(flags)]);
    process.stdout.write(`${await requestLoginUrl(context.config, context.logger, customerId)}\n`);
    setExitCode(0);
  });
}
