/**
 * A simulator on port 0 with Config pointing at it, and builders for the real clients.
 * Not a test file itself.
 */
import { Writable } from 'node:stream';
import { loadConfig, requireApi, type ApiName, type ApiSettings, type Config } from '../../../src/config.js';
import { createApiTokenProvider, type ApiTokenProviderDeps } from '../../../src/delivery/apiTokenProvider.js';
import { createHttpTransport, type HttpTransport } from '../../../src/delivery/httpTransport.js';
import type { TokenProvider } from '../../../src/delivery/tokenProvider.js';
import { createLogger, type Logger } from '../../../src/logger.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../../src/simulator/index.js';

export const USER_AGENT = 'Acme-AcmeGifts';

/** A valid order for the simulator's default catalogue and customers. */
export function validOrder(customer = 1001): object {
  return {
    businessCustomerId: customer,
    recipient: {
      address: {
        firstName: 'Anna',
        lastName: 'de Vries',
        street: 'Keizersgracht',
        streetNumber: 12,
        postalCode: '1015 CX',
        city: 'Amsterdam',
        countryCode: 'NL',
      },
      languageCode: 'nl',
      email: 'anna@example.nl',
      telephoneNumber: '+31612345678',
    },
    products: [{ productId: 5001, quantity: 1 }],
  };
}

/** Captures pino's JSON lines (STYLE habit 10: assert on the real log stream). */
export function capturedLogger(level = 'trace'): { logger: Logger; lines: () => string } {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines: () => text };
}

export interface ApiRig {
  simulator: Simulator;
  config: Config;
  transport: HttpTransport;
  settings(api: ApiName): ApiSettings;
  tokenProvider(api: ApiName, extra?: Partial<ApiTokenProviderDeps>): TokenProvider;
  close(): Promise<void>;
}

/** Starts a simulator and a config for it; `env` overrides variables (e.g. secrets, timeouts). */
export async function apiRig(
  options: SimulatorOptions = {},
  env: Record<string, string> = {},
  logger?: Logger,
): Promise<ApiRig> {
  const simulator = await startSimulator({ seed: 7, ...options });
  const config = loadConfig({
    env: {
      BULKORDER_BASE_URL: simulator.url,
      BULKORDER_USER_AGENT: USER_AGENT,
      BULKORDER_BUSINESS_CLIENT_ID: simulator.credentials.business.clientId,
      BULKORDER_BUSINESS_CLIENT_SECRET: simulator.credentials.business.clientSecret,
      BULKORDER_CAFETARIAPLAN_CLIENT_ID: simulator.credentials.cafetariaplan.clientId,
      BULKORDER_CAFETARIAPLAN_CLIENT_SECRET: simulator.credentials.cafetariaplan.clientSecret,
      ...env,
    },
  });
  const transport = createHttpTransport(config.http);
  const log = logger ?? createLogger({ level: 'silent' });
  return {
    simulator,
    config,
    transport,
    settings: (api) => requireApi(config, api),
    tokenProvider: (api, extra = {}) =>
      createApiTokenProvider(requireApi(config, api), {
        transport,
        logger: log,
        endpoint: { baseDelayMs: 10, maxDelayMs: 50 },
        ...extra,
      }),
    async close() {
      await simulator.close(); // first: it ends held (never answered) sockets the transport would wait for
      await transport.close();
    },
  };
}
