import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { DeliveryMetricsSink, MetricsApi } from './bulkorderMetrics.js';

/** Wraps the one API call of a delivery so each request is timed and its classified outcome counted. */
export function observeDelivery<P, R>(
  send: (payload: P, record: R) => Promise<ApiOutcome>,
  sink: DeliveryMetricsSink,
  api: MetricsApi,
): (payload: P, record: R) => Promise<ApiOutcome> {
  return async (payload, record) => {
    const started = performance.now();
    const outcome = await send(payload, record);
    sink.request(api, outcome, (performance.now() - started) / 1000);
    return outcome;
  };
}
