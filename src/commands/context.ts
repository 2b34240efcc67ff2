import { Option, type Command } from 'commander';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

/** Options every command that reads configuration accepts. */
export interface ConfigFlags {
  configFile?: string;
  /** The former name of --config-file, still accepted (hidden from help). */
  envFile?: string;
  production?: boolean;
}

/**
 * Adds `--config-file` and `--production` to a command. The file option is not called
 * `--env-file`: Node 20 reads that flag itself even after the script name (nodejs/node#54232)
 * and exits 9 with "node: <file>: not found" before any of our code runs. `--env-file` still
 * works when the file exists (Node and we then read the same file), hidden from help.
 */
export function withConfigFlags(command: Command): Command {
  return command
    .option('--config-file <path>', 'load BULKORDER_* variables from a dotenv file (real environment variables win)')
    .addOption(new Option('--env-file <path>', 'former name of --config-file').hideHelp())
    .option('--production', 'confirm that BULKORDER_ENV=production is meant (same as BULKORDER_CONFIRM_PRODUCTION=yes)');
}

/** Loads the configuration and a logger at its level; announces the environment once. */
export async function loadCommandContext(flags: ConfigFlags, options: { announce?: boolean } = {}): Promise<{ config: Config; logger: Logger }> {
  const [{ loadConfig, announceConfig }, { createLogger }] = await Promise.all([import('../config.js'), import('../logger.js')]);
  const file = flags.configFile ?? flags.envFile;
  const config = loadConfig({
    ...(file === undefined ? {} : { envFile: file, envFileFlag: flags.configFile === undefined ? '--env-file' : '--config-file' }),
    confirmProduction: flags.production === true,
  });
  const logger = createLogger({ level: config.logLevel });
  if (options.announce !== false) announceConfig(config, logger);
  return { config, logger };
}
