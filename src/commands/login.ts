/**
 * `bulkorder login <customerId | --email e --company c>`: asks the Cafetariaplan API for a
 * one-time login URL and prints it on stdout (and nothing else there, so it can be piped).
 */
import type { Command } from 'commander';
import { type CommandIo, loadCommandContext, withConfigFlags, withExamples } from './options.js';
import type { LoginFlags } from './loginRun.js';

/** Declares the command; the client loads only when it runs. */
export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('login')
    .argument('[customerId]', 'the customerId returned when the employee account was created')
    .option(
      '--email <email>',
      "the employee's e-mail (with --company): the customerId is looked up in this environment's accounts",
    )
    .option('--company <companyId>', "the employer's companyId (UUID), with --email")
    .description('Print a one-time Cafetariaplan login URL for an employee account');
  withExamples(
    command,
    [
      'bulkorder login 1f0c5d0e-2b7a-4c8e-9d3f-5a6b7c8d9e0f',
      'bulkorder login --email anna.devries@example.nl --company 3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01',
    ],
    'Exit codes: 0 URL printed; 2 usage, configuration or credentials refused; 4 the API refused the request ' +
      '(e.g. unknown customerId) or no account is known for that employee here; 5 API, token endpoint or Redis unavailable.',
  );
  withConfigFlags(command).action(async (customerId: string | undefined, flags: LoginFlags) => {
    const { runLogin } = await import('./loginRun.js');
    io.setExitCode(await runLogin(customerId, flags, await loadCommandContext(flags, io)));
  });
}
