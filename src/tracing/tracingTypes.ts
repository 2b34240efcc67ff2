import type { Telemetry } from 'bullmq';

/** Attribute values a span takes: never a name, e-mail, phone or address (README "Run it with your stack"). */
export type SpanAttributes = Record<string, string | number | boolean>;

/** The span a traced piece of work runs in: it may add what it learns before it ends. */
export interface SpanHandle {
  set(attributes: SpanAttributes): void;
  /** Marks the span failed (an error's code or name, never its message: it may quote a row). */
  fail(code: string): void;
}

/**
 * OpenTelemetry, as bulkorder uses it. This module imports no OpenTelemetry package: {@link startTracing}
 * loads them (src/tracing/otelTracing.ts) only when the OTEL_* variables ask for traces, so a run without
 * them loads and costs nothing (test/observability/tracing.test.ts checks the loaded modules).
 */
export interface Tracing {
  /** Runs `work` inside a new span, a child of the active one; it ends when `work` settles. */
  span<T>(name: string, attributes: SpanAttributes, work: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** BullMQ's telemetry option for queues and workers: the job carries the trace across the queue. */
  readonly bullmq: Telemetry;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}
