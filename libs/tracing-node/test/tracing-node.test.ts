// The mains' switch: traces only when OTEL_TRACES_EXPORTER names an exporter, then the Node SDK is the
// global tracer provider Warren's libraries find through @opentelemetry/api.
import { ProxyTracerProvider, context, propagation, trace } from '@opentelemetry/api';
import { startTracing, tracingRequested } from '@warren/tracing-node';

afterEach(() => {
  trace.disable();
  context.disable();
  propagation.disable();
});

/** The provider behind the API's global: the SDK's once started, else the API's no-op one. */
const registered = (): unknown => {
  const global = trace.getTracerProvider();
  return global instanceof ProxyTracerProvider ? global.getDelegate() : global;
};
const noop = new ProxyTracerProvider().getDelegate();

it.each([
  [{}, false],
  [{ OTEL_TRACES_EXPORTER: '' }, false],
  [{ OTEL_TRACES_EXPORTER: 'none' }, false],
  [{ OTEL_TRACES_EXPORTER: ' none , ' }, false],
  [{ OTEL_TRACES_EXPORTER: 'console' }, true],
  [{ OTEL_TRACES_EXPORTER: 'otlp,console' }, true],
  [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, false],
  [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'false' }, true],
])('tracingRequested(%j) is %s', (env, expected) => {
  expect(tracingRequested(env)).toBe(expected);
});

it('leaves the API with no provider when not asked (off by default)', async () => {
  const tracing = startTracing({}, { serviceName: 'calculator' });
  expect(tracing.enabled).toBe(false);
  expect(registered()).toBe(noop);
  await tracing.shutdown();
});

it('registers the SDK as the global provider when asked, and shuts it down once however often asked', async () => {
  const tracing = startTracing({ OTEL_TRACES_EXPORTER: 'console' }, { serviceName: 'calculator' });
  expect(tracing.enabled).toBe(true);
  expect(registered()).not.toBe(noop);
  await Promise.all([tracing.shutdown(), tracing.shutdown()]);
});
