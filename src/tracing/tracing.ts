import type { TracingSettings } from '../config.js';
import type { Tracing } from './tracingTypes.js';

export type { SpanAttributes, Tracing } from './tracingTypes.js';

// One per process: OpenTelemetry's API is process-wide (one tracer provider, one context manager).
let started: Promise<Tracing> | undefined;

/** Starts tracing once for the process (later calls get the same); `undefined` settings: none, nothing loaded. */
export function startTracing(settings: TracingSettings | undefined): Promise<Tracing> | undefined {
  if (settings === undefined) return undefined;
  started ??= import('./otelTracing.js').then((m) => m.otelTracing(settings));
  return started;
}

/** Flushes and stops tracing if it was started (the CLI's exit path); a no-op otherwise. */
export async function stopTracing(): Promise<void> {
  const running = started;
  started = undefined;
  if (running !== undefined) await (await running).shutdown();
}
