/**
 * Helpers for the simulator's tests: a real undici Agent against a real simulator on port 0,
 * plus a valid order and account to vary. Not a test file itself.
 */
import { Agent, request } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import type { ApiName, Simulator } from '../../src/simulator/index.js';

/** A User-Agent the simulator accepts. */
const USER_AGENT = 'Acme-AcmeGifts';

/** What a test looks at in an answer. */
export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
}

/** A connection pool for one test file; close it in afterAll. */
export function createAgent(): Agent {
  return new Agent({ keepAliveTimeout: 1000, connections: 64 });
}

/** Sends a request and reads the whole answer. */
export async function send(
  agent: Agent,
  url: string,
  options: {
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
    headers?: Record<string, string>;
    body?: string | Buffer;
    signal?: AbortSignal;
    headersTimeout?: number;
  } = {},
): Promise<Reply> {
  const response = await request(url, {
    dispatcher: agent,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    body: options.body ?? null,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.headersTimeout === undefined ? {} : { headersTimeout: options.headersTimeout }),
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

/** Form-encoded token request with the simulator's own credentials for `api`. */
export async function fetchToken(agent: Agent, sim: Simulator, api: ApiName = 'business'): Promise<string> {
  const { clientId, clientSecret } = sim.credentials[api];
  const reply = await send(agent, `${sim.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }).toString(),
  });
  if (reply.status !== 200) throw new Error(`token request failed: ${reply.status} ${reply.text}`);
  return reply.json.access_token as string;
}

/** POSTs `body` (JSON-encoded unless a string) to an API path with valid headers, overridable. */
export function postApi(
  agent: Agent,
  sim: Simulator,
  path: string,
  token: string,
  body: unknown,
  headers: Record<string, string | undefined> = {},
  signal?: AbortSignal,
): Promise<Reply> {
  const merged: Record<string, string> = {};
  const all = {
    authorization: `Bearer ${token}`,
    'user-agent': USER_AGENT,
    'content-type': 'application/json',
    ...headers,
  };
  for (const [name, value] of Object.entries(all)) if (value !== undefined) merged[name] = value;
  return send(agent, `${sim.url}${path}`, {
    method: 'POST',
    headers: merged,
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** A valid order for the default catalogue. */
export function validOrder(): any {
  return {
    businessCustomerId: 1001,
    recipient: {
      address: {
        firstName: 'Anna',
        lastName: 'de Vries',
        street: 'Oudegracht',
        streetNumber: 12,
        postalCode: '3511 AB',
        city: 'Utrecht',
        countryCode: 'NL',
      },
      languageCode: 'nl',
      email: 'anna.devries@example.nl',
      telephoneNumber: '+31612345678',
    },
    products: [{ productId: 5001, quantity: 2 }],
  };
}

/** A valid account for the Cafetariaplan API. */
export function validAccount(): any {
  return {
    email: 'jan@example.com',
    firstName: 'Jan',
    lastName: 'Jansen',
    isoLanguageCode: 'nl',
    companyId: '3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01',
  };
}

/** A clock tests move by hand, for expiry and the rate window. */
export function manualClock(start = Date.UTC(2030, 0, 1)): { now: () => number; advance: (ms: number) => void } {
  let now = start;
  return { now: () => now, advance: (ms) => (now += ms) };
}
