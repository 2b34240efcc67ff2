import type { Command } from 'commander';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

/** Options every command that reads configuration accepts. */
export interface ConfigFlags {
  envFile?: string;
  production?: boolean;
}

/** Adds `--env-file` and `--production` to a command. */
export function withConfigFlags(command: Command): Command {
  return command
    .option('--env-file <path>', 'load BULKORDER_* variables from a file (its values win over inherited environment variables; bulkorder config shows the result)')
    .option('--production', 'confirm that BULKORDER_ENV=production is meant (same as BULKORDER_CONFIRM_PRODUCTION=yes)');
}

/** Loads the configuration and a logger at its level; announces the environment once. */
export async function loadCommandContext(flags: ConfigFlags, options: { announce?: boolean } = {}): Promise<{ config: Config; logger: Logger }> {
  const [{ loadConfig, announceConfig }, { createLogger }] = await Promise.all([import('../config.js'), import('../logger.js')]);
  const config = loadConfig({
    ...(flags.envFile === undefined ? {} : { envFile: flags.envFile }),
    confirmProduction: flags.production === true,
  });
  const logger = createLogger({ level: config.logLevel });
  if (options.announce !== false) announceConfig(config, logger);
  return { config, logger };
}
