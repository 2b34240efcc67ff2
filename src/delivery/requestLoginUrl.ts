/**
 * The one-shot login flow behind `bulkorder login`: a token (this process only, no Redis),
 * one login call, and a typed error for anything but a URL.
 */
import { requireApi, type Config } from '../config.js';
import { BulkorderError, ExitCode, InfrastructureError, UsageError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createApiTokenProvider } from './apiTokenProvider.js';
import { createCafetariaplanClient } from './cafetariaplanClient.js';
import { createHttpTransport } from './httpTransport.js';

/** Returns the one-time login URL for `customerId`, or throws a BulkorderError with the API's code. */
export async function requestLoginUrl(config: Config, logger: Logger, customerId: string): Promise<string> {
  const settings = requireApi(config, 'cafetariaplan');
  const transport = createHttpTransport(config.http);
  try {
    const client = createCafetariaplanClient(settings, { transport, logger, tokenProvider: createApiTokenProvider(settings, { transport, logger }) });
    const outcome = await client.login(customerId);
    switch (outcome.kind) {
      case 'delivered':
        return outcome.loginUrl;
      case 'unauthorized':
        throw new UsageError(outcome.code, `cafetariaplan API refused our credentials: ${outcome.message}`);
      case 'permanent':
        throw new BulkorderError(outcome.code, `cafetariaplan API refused the login request (HTTP ${outcome.status}): ${outcome.message}`, { exitCode: ExitCode.needsAttention });
      default:
        throw new InfrastructureError(outcome.code, `cafetariaplan API unavailable: ${outcome.message}`);
    }
  } finally {
    await transport.close();
  }
}
