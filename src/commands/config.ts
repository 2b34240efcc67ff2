/**
 * `bulkorder config`: the effective configuration and where each value came from, secrets
 * masked; refuses (exit 2) exactly as any other command would start.
 */
import type { Command } from 'commander';
import { ExitCode } from '../errors.js';
import { jsonText, runAction, withConfigFlags, withExamples, type ConfigFlags, type CommandIo } from './options.js';

interface ConfigCommandFlags extends ConfigFlags {
  json?: boolean;
}

/** Declares the command. */
export function register(program: Command, io: CommandIo): void {
  const command = program
    .command('config')
    .description(
      'Print the effective configuration, where each value came from (env-file, environment, default) and the Redis namespaces; secrets masked',
    )
    .option('--json', 'print it as JSON');
  withExamples(
    command,
    ['bulkorder config --config-file .env', 'bulkorder config --json'],
    'Exit codes: 0 printed; 2 the configuration is refused (the message names the variable).',
  );
  withConfigFlags(command).action((flags: ConfigCommandFlags) =>
    runAction(
      io,
      flags,
      { load: () => import('../configReport.js'), announce: false },
      ({ configReport, configReportLines }, context) => {
        const report = configReport(context.config);
        io.stdout.write(flags.json === true ? jsonText(report) : `${configReportLines(report).join('\n')}\n`);
        return ExitCode.ok;
      },
    ),
  );
}
