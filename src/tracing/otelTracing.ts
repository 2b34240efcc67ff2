import { tracingChannel } from 'node:diagnostics_channel';
import { context, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BullMQOtel } from 'bullmq-otel';
import type { TracingSettings } from '../config.js';
import { bulkorderVersion } from '../paths.js';
import type { SpanHandle, Tracing } from './tracingTypes.js';

const TRACER = 'bulkorder';

/**
 * The OpenTelemetry SDK for bulkorder, loaded only by src/tracing/tracing.ts's startTracing: a Node tracer
 * provider (async-local context) exporting OTLP/HTTP to settings.tracesUrl, undici's instrumentation (a
 * client span per request, traceparent sent), BullMQ's (bullmq-otel: the trace rides in each job's
 * options), and a child span per Redis script call (ioredis's `ioredis:command` tracing channel), made only
 * inside a trace, without its arguments (they hold the orders).
 */
export function otelTracing(settings: TracingSettings): Tracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': bulkorderVersion() }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }))],
  });
  provider.register();
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [new UndiciInstrumentation()],
  });
  const tracer = provider.getTracer(TRACER, bulkorderVersion());
  const stopRedis = traceRedisScripts(tracer);

  return {
    bullmq: new BullMQOtel({ tracerName: TRACER, version: bulkorderVersion() }),
    async span(name, attributes, work) {
      return tracer.startActiveSpan(name, { attributes }, async (span) => {
        const handle: SpanHandle = {
          set: (more) => span.setAttributes(more),
          fail: (code) => span.setStatus({ code: SpanStatusCode.ERROR, message: code }),
        };
        try {
          return await work(handle);
        } catch (error) {
          handle.fail(codeOf(error));
          throw error;
        } finally {
          span.end();
        }
      });
    },
    async shutdown() {
      stopRedis();
      unregister();
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'Error';
}

interface CommandMessage {
  command?: string;
  [key: symbol]: Span | undefined;
}

/** Spans for EVAL/EVALSHA/FCALL while a trace is active: our Lua scripts and BullMQ's. */
function traceRedisScripts(tracer: ReturnType<NodeTracerProvider['getTracer']>): () => void {
  const channel = tracingChannel<CommandMessage>('ioredis:command');
  const SPAN = Symbol('span');
  const isScript = (name: string | undefined): name is string =>
    name !== undefined && /^(evalsha|eval|fcall)/i.test(name);
  // A rejected command publishes error, then asyncEnd: the span ends once, at asyncEnd.
  const end = (message: CommandMessage): void => {
    message[SPAN]?.end();
    message[SPAN] = undefined;
  };
  const handlers = {
    start(message: CommandMessage) {
      const { command } = message;
      if (!isScript(command) || trace.getSpan(context.active()) === undefined) return;
      message[SPAN] = tracer.startSpan(`redis ${command.toUpperCase()}`, {
        attributes: { 'db.system.name': 'redis', 'db.operation.name': command.toUpperCase() },
      });
    },
    asyncEnd: (message: CommandMessage) => end(message),
    error: (message: CommandMessage & { error?: unknown }) =>
      message[SPAN]?.setStatus({ code: SpanStatusCode.ERROR, message: codeOf(message.error) }),
    end: () => undefined,
    asyncStart: () => undefined,
  };
  channel.subscribe(handlers);
  return () => channel.unsubscribe(handlers);
}
