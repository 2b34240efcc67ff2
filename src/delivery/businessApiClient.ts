/**
 * The Business API: POST {base_url}/business-api/orders. The payload is built and validated
 * by ingest; this client only sends it and classifies the answer.
 */
import type { ApiSettings } from '../config.js';
import { authorizedPost, type ApiClientDeps, type PostOptions } from './authorizedPost.js';
import type { Outcome } from './classifyOutcome.js';

export interface BusinessApiClient {
  /**
   * Sends one order, once: no transport-level retry (retries belong to the job, where each
   * attempt is recorded). Resolves with the classified Outcome; never rejects for a remote failure.
   * Pass the order key as `options.idempotencyKey` (the Idempotency-Key header).
   */
  createOrder(payload: object, options?: PostOptions): Promise<Outcome>;
}

/** A client for the Business API; `settings` from `requireApi(config, 'business')`. */
export function createBusinessApiClient(settings: ApiSettings, deps: ApiClientDeps): BusinessApiClient {
  if (settings.api !== 'business')
    throw new Error(`createBusinessApiClient needs business settings, got ${settings.api}`);
  return {
    createOrder: (payload, options) => authorizedPost(settings, deps, { path: '/orders', payload, ...options }),
  };
}
