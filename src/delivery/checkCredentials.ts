/**
 * `bulkorder token --check`: asks the token endpoint for a fresh token for every API whose
 * credentials are configured (never from the cache: the point is to prove the credentials),
 * and reports OK or the reason. The token itself is dropped unseen.
 */
import { requireApi, type ApiName, type Config } from '../config.js';
import { ConfigError, ExitCode, isBulkorderError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createHttpTransport } from './httpTransport.js';
import { fetchAccessToken } from './tokenEndpoint.js';

/** One API's check; `exitCode` 0 OK, 2 refused or misconfigured, 5 unreachable. */
export interface CredentialCheck {
  api: ApiName;
  tokenUrl: string;
  ok: boolean;
  /** Seconds the new token would live, when OK. */
  lifetimeSeconds?: number;
  code?: string;
  reason?: string;
  exitCode: number;
}

/** Checks each configured API; throws ConfigError when none is configured or one is incomplete. */
export async function checkCredentials(
  config: Config,
  logger: Logger,
  options: { attempts?: number } = {},
): Promise<CredentialCheck[]> {
  const apis = (['business', 'cafetariaplan'] as const).filter((api) => config.credentials[api] !== undefined);
  if (apis.length === 0) {
    throw new ConfigError(
      'BULKORDER_BUSINESS_CLIENT_ID',
      'no API credentials are configured (set BULKORDER_BUSINESS_CLIENT_ID/_SECRET or BULKORDER_CAFETARIAPLAN_CLIENT_ID/_SECRET)',
    );
  }
  const settings = apis.map((api) => requireApi(config, api));
  const transport = createHttpTransport(config.http);
  try {
    return await Promise.all(
      settings.map(async (s): Promise<CredentialCheck> => {
        try {
          const token = await fetchAccessToken({ ...s, transport, logger, attempts: options.attempts ?? 3 });
          return {
            api: s.api,
            tokenUrl: s.tokenUrl,
            ok: true,
            lifetimeSeconds: Math.round(token.lifetimeMs / 1000),
            exitCode: ExitCode.ok,
          };
        } catch (error) {
          if (!isBulkorderError(error)) throw error;
          return {
            api: s.api,
            tokenUrl: s.tokenUrl,
            ok: false,
            code: error.code,
            reason: error.message,
            exitCode: error.exitCode,
          };
        }
      }),
    );
  } finally {
    await transport.close();
  }
}

/** The command's exit code: refused credentials (2) need a person more than an outage (5) does. */
export function checkExitCode(checks: readonly CredentialCheck[]): number {
  if (checks.every((c) => c.ok)) return ExitCode.ok;
  if (checks.some((c) => c.exitCode === ExitCode.usage)) return ExitCode.usage;
  return Math.max(...checks.map((c) => c.exitCode));
}
