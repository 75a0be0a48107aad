// OpenTelemetry for Warren's runnable mains (the broker, the example services, `npm start`): the
// official Node SDK (@opentelemetry/sdk-node), configured by the standard OTEL_* variables, started
// only when OTEL_TRACES_EXPORTER asks for an exporter. Libraries never import this package: they
// create spans through @opentelemetry/api alone, so an application that embeds them picks its own SDK.
import { NodeSDK } from '@opentelemetry/sdk-node';

/** The environment, as the main read it (only mains read process.env). */
export type TracingEnv = Readonly<Record<string, string | undefined>>;

export interface TracingOptions {
  /** `service.name` when OTEL_SERVICE_NAME does not set one, e.g. `calculator`, `warren-broker`. */
  readonly serviceName: string;
}

/** What a main holds of its tracing: whether it is on, and the flush it awaits before exiting. */
export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is still buffered and stops the SDK; resolves (never rejects) even when the exporter is away. */
  shutdown(): Promise<void>;
}

const off: Tracing = { enabled: false, shutdown: () => Promise.resolve() };

/**
 * Whether the environment asks for traces: OTEL_TRACES_EXPORTER names an exporter (`console`, `otlp`,
 * `zipkin`, or a list) other than `none`, and OTEL_SDK_DISABLED is not `true`. Unset means off: the
 * SDK's own default (`otlp` to localhost) would have every process export to a collector nobody asked for.
 */
export function tracingRequested(env: TracingEnv): boolean {
  const exporters = (env['OTEL_TRACES_EXPORTER'] ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '' && e !== 'none');
  return exporters.length > 0 && env['OTEL_SDK_DISABLED']?.trim().toLowerCase() !== 'true';
}

/**
 * Starts the Node SDK for traces when {@link tracingRequested}: exporters from OTEL_TRACES_EXPORTER,
 * the OTLP endpoint and protocol from OTEL_EXPORTER_OTLP_*, the sampler from OTEL_TRACES_SAMPLER, the
 * propagators from OTEL_PROPAGATORS, resource attributes from OTEL_RESOURCE_ATTRIBUTES and
 * OTEL_SERVICE_NAME (default `options.serviceName`). Metrics and logs stay Warren's own (Prometheus on
 * the ops port, pino lines with `trace_id`), so the SDK exports traces only. Call it first in a main.
 *
 * @example
 * const tracing = startTracing(process.env, { serviceName: 'calculator' });
 * // ... on exit:
 * await tracing.shutdown();
 */
export function startTracing(env: TracingEnv, options: TracingOptions): Tracing {
  if (!tracingRequested(env)) return off;
  const named = env['OTEL_SERVICE_NAME'] !== undefined && env['OTEL_SERVICE_NAME'].trim() !== '';
  const sdk = new NodeSDK({ ...(named ? {} : { serviceName: options.serviceName }), metricReaders: [], logRecordProcessors: [] });
  sdk.start();
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown: () => (stopping ??= sdk.shutdown().catch(() => undefined)),
  };
}
