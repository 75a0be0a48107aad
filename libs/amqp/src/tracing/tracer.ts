// Whether anyone traces, asked on every call. Through @opentelemetry/api only: the SDK (if any) is the
// application's choice (its main registers one; Warren's mains do it from OTEL_* with @warren/tracing-node).
// With none registered the API hands out a no-op tracer whose startSpan still allocates a span object per
// call; asking the global provider first keeps an untraced call free of span objects altogether.
import { ProxyTracerProvider, trace, type Tracer, type TracerProvider } from '@opentelemetry/api';

/** The instrumentation scope Warren's spans are created under. */
export const instrumentationScope = '@warren/amqp';

// The API's no-op provider: what a proxy with no SDK behind it delegates to (the API does not export it).
const noopProvider: TracerProvider = new ProxyTracerProvider().getDelegate();
let cached: { readonly provider: TracerProvider; readonly tracer: Tracer } | undefined;

/**
 * The tracer Warren's spans come from, or undefined when no tracer provider is registered (tracing off):
 * callers then create no span, no context and no closure for it.
 */
export function activeTracer(): Tracer | undefined {
  const global = trace.getTracerProvider();
  const provider = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
  if (provider === noopProvider) return undefined;
  if (cached?.provider !== provider) cached = { provider, tracer: provider.getTracer(instrumentationScope) };
  return cached.tracer;
}
