/**
 * What `bulkorder config` prints: the effective configuration, where each value came from
 * (env-file, environment, default), and the Redis namespaces it leads to. Secrets are masked.
 */
import {
  CONFIG_VARIABLES,
  describeSource,
  redisPrefix,
  type ApiName,
  type Config,
  type ConfigSource,
} from './config.js';
import { classifyHost } from './target.js';

export interface ConfigReport {
  env: string;
  envSource: ConfigSource;
  envFile: string | null;
  baseUrl: string | null;
  baseUrlSource: ConfigSource;
  /** How the base URL's host classifies under the host rules. */
  baseUrlHost: 'production' | 'acceptance' | 'unknown' | null;
  /** Redis namespace of each API's records, or why it has none yet. */
  namespaces: Record<ApiName, string>;
  /** Variables the env-file set over a different inherited value. */
  shadowed: readonly string[];
  variables: { name: string; value: string; source: ConfigSource }[];
}

/** The report of a loaded configuration. */
export function configReport(config: Config): ConfigReport {
  return {
    env: config.env,
    envSource: config.sources.BULKORDER_ENV ?? 'default',
    envFile: config.envFile ?? null,
    baseUrl: config.baseUrl ?? null,
    baseUrlSource: config.sources.BULKORDER_BASE_URL ?? 'default',
    baseUrlHost: config.baseUrl === undefined ? null : classifyHost(new URL(config.baseUrl).hostname, config.hostRules),
    namespaces: { business: namespace(config, 'business'), cafetariaplan: namespace(config, 'cafetariaplan') },
    shadowed: config.shadowed,
    variables: CONFIG_VARIABLES.map((name) => ({
      name,
      value: config.effective[name] ?? '',
      source: config.sources[name] ?? 'default',
    })),
  };
}

function namespace(config: Config, api: ApiName): string {
  try {
    return redisPrefix(config, api);
  } catch {
    return '(none: base URL or client id not set)';
  }
}

const HOST_WORDS = {
  production: 'a production host',
  acceptance: 'an acceptance host',
  unknown: 'a host of unknown environment',
} as const;

/** The report as lines for a person. */
export function configReportLines(report: ConfigReport): string[] {
  const lines = [
    `environment  ${report.env} (${describeSource(report.envSource)})${report.env === 'production' ? ': real orders, customers get e-mail and SMS' : ': the API does not process these orders'}`,
    `base URL     ${report.baseUrl ?? '(not set)'} (${describeSource(report.baseUrlSource)})${report.baseUrlHost === null ? '' : `, ${HOST_WORDS[report.baseUrlHost]}`}`,
    `env-file     ${report.envFile ?? '(none)'}${report.envFile === null ? '' : ': its values win over the inherited environment'}`,
    `Redis keys   orders ${report.namespaces.business}`,
    `             accounts ${report.namespaces.cafetariaplan}${report.namespaces.cafetariaplan.startsWith('(') ? '' : ':accounts'}`,
  ];
  if (report.shadowed.length > 0)
    lines.push(`overridden   the env-file overrode these inherited variables: ${report.shadowed.join(', ')}`);
  const width = Math.max(...report.variables.map((v) => v.name.length));
  lines.push(
    '',
    ...report.variables.map(
      (v) =>
        `${v.name.padEnd(width)}  ${(v.value === '' ? '(not set)' : v.value).padEnd(24)}  ${describeSource(v.source)}`,
    ),
  );
  return lines;
}
