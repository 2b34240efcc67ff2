import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { DeliveryMetricsSink, MetricsApi } from './bulkorderMetrics.js';

/** Wraps the one API call of a delivery so each request is timed and its classified outcome counted. */
export function observeDelivery<P>(send: (payload: P) => Promise<ApiOutcome>, sink: DeliveryMetricsSink, api: MetricsApi): (payload: P) => Promise<ApiOutcome> {
  return async (payload) => {
    const started = performance.now();
    const outcome = await send(payload);
    sink.request(api, outcome, (performance.now() - started) / 1000);
    return outcome;
  };
}
