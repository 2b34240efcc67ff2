import type { Outcome as ApiOutcome } from '../delivery/classifyOutcome.js';
import type { SpanAttributes, Tracing } from '../tracing/tracing.js';
import type { MetricsApi } from './bulkorderMetrics.js';

/**
 * Wraps the one API call of a delivery in a span (with traces on only: off, `send` is used as it is):
 * the order key, batch and API going in; the classified outcome, HTTP status, error code and remote id
 * coming out. Never the payload: it holds names, addresses, e-mails and phones.
 */
export function traceDelivery<P>(
  send: (payload: P, record: { key: string; batchId?: string }) => Promise<ApiOutcome>,
  tracing: Tracing,
  api: MetricsApi,
): (payload: P, record: { key: string; batchId?: string }) => Promise<ApiOutcome> {
  return (payload, record) =>
    tracing.span(
      'bulkorder.post',
      {
        'bulkorder.api': api,
        'bulkorder.order_key': record.key,
        ...(record.batchId === undefined ? {} : { 'bulkorder.batch_id': record.batchId }),
      },
      async (span) => {
        const outcome = await send(payload, record);
        const answer: SpanAttributes = { 'bulkorder.outcome': outcome.kind };
        if (outcome.status !== undefined) answer['http.response.status_code'] = outcome.status;
        if (outcome.kind === 'delivered') {
          if (outcome.remoteId !== undefined) answer['bulkorder.remote_order_id'] = String(outcome.remoteId);
        } else {
          answer['bulkorder.error_code'] = outcome.code;
          span.fail(outcome.code);
        }
        span.set(answer);
        return outcome;
      },
    );
}
