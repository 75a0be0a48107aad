// One trace through the whole system (issue #31's tracing acceptance), in this test's process: the
// embedded system (scripts/embedded.ts: the broker and the calculator instances, each on a connection
// of its own over the in-memory broker, as `npm start` runs them in processes) with an OpenTelemetry
// SDK whose spans go to an in-memory exporter. One gateway call to `average`, which sums through a
// nested call to `sum`, must give one trace: the HTTP request → the broker's call → the worker
// running `average` → its nested call → the other worker running `sum`, each the parent of the next,
// and the trace id and span id on the worker's log line written inside the call.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { WarrenAttr } from '../../libs/amqp/src/tracing/call-spans';
import { createLogger, type Logger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';

const td = new Teardown();
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
/** Every JSON log line, by the part (process name) that wrote it. */
const lines: { part: string; line: Record<string, unknown> }[] = [];
let system: EmbeddedSystem;

const logger = (part: string): Logger =>
  createLogger({ name: part, level: 'debug', destination: { write: (text: string) => void lines.push({ part, line: JSON.parse(text) as Record<string, unknown> }) } });

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  td.add(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });
  // PREFETCH 1: the instance running `average` takes nothing else meanwhile, so its nested `sum` runs on the other one.
  system = await startEmbedded({ GATEWAY_AUTH: 'none', GATEWAY_PORT: '0', PREFETCH: '1' }, logger, {
    instances: [{ name: 'calculator-1', service: 'calculator' }, { name: 'calculator-2', service: 'calculator' }],
    broker: { defaultMetrics: false },
  });
  td.add(() => system.close());
}, 30_000);
afterAll(() => td.run());

const byId = (spans: readonly ReadableSpan[], id: string | undefined): ReadableSpan | undefined => spans.find((s) => s.spanContext().spanId === id);

it('follows a gateway call through a nested call as one trace: gateway → caller → worker → nested call → its worker', async () => {
  exporter.reset();
  // The caller's own trace context, with a vendor's tracestate that must travel along.
  const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const res = await fetch(`${system.url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${callerTrace}-00f067aa0ba902b7-01`, tracestate: 'vendor=opaque-1' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'average', params: [1, 2, 6], id: 1 }),
  });
  expect(await res.json()).toEqual({ jsonrpc: '2.0', result: 3, id: 1 });
  // The HTTP span ends after the answer is written: wait for all five.
  await waitFor(() => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === callerTrace).length >= 5, { timeoutMs: 5000, intervalMs: 20, message: 'five spans exported' });
  const spans = exporter.getFinishedSpans();
  // One trace: every span is the caller's trace.
  expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([callerTrace]));

  const http = spans.find((s) => s.name === 'POST /rpc');
  expect(http?.kind).toBe(SpanKind.SERVER);
  expect(http?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
  const call = spans.find((s) => s.name === 'average' && s.kind === SpanKind.CLIENT);
  const worker = spans.find((s) => s.name === 'average' && s.kind === SpanKind.SERVER);
  const nested = spans.find((s) => s.name === 'sum' && s.kind === SpanKind.CLIENT);
  const nestedWorker = spans.find((s) => s.name === 'sum' && s.kind === SpanKind.SERVER);
  // Parent links: each span is the child of the one before it.
  expect(byId(spans, call?.parentSpanContext?.spanId)).toBe(http);
  expect(byId(spans, worker?.parentSpanContext?.spanId)).toBe(call);
  expect(byId(spans, nested?.parentSpanContext?.spanId)).toBe(worker);
  expect(byId(spans, nestedWorker?.parentSpanContext?.spanId)).toBe(nested);

  // Three parts of the system: the gateway (broker) and two calculator instances.
  expect(worker?.attributes[WarrenAttr.instanceId]).toMatch(/^calculator-[12]$/);
  expect(nestedWorker?.attributes[WarrenAttr.instanceId]).toMatch(/^calculator-[12]$/);
  expect(nestedWorker?.attributes[WarrenAttr.instanceId]).not.toBe(worker?.attributes[WarrenAttr.instanceId]);

  // Messaging and RPC semantic conventions; the call id is the message id on both sides.
  expect(call?.attributes).toMatchObject({ 'messaging.system': 'rabbitmq', 'messaging.operation.type': 'send', 'messaging.rabbitmq.destination.routing_key': 'average', 'rpc.system': 'jsonrpc', 'rpc.method': 'average' });
  expect(worker?.attributes).toMatchObject({ 'messaging.system': 'rabbitmq', 'messaging.operation.type': 'process', 'messaging.destination.name': 'warren.svc.calculator', 'rpc.system': 'jsonrpc', 'rpc.method': 'average', 'rpc.service': 'calculator', [WarrenAttr.attempt]: 1 });
  expect(typeof worker?.attributes[WarrenAttr.queueWaitMs]).toBe('number');
  expect(worker?.attributes['messaging.message.id']).toBe(call?.attributes['messaging.message.id']);
  expect(nestedWorker?.attributes['messaging.message.id']).toBe(nested?.attributes['messaging.message.id']);
  // The tracestate came along the whole way, through the wire twice.
  for (const span of [http, call, worker, nested, nestedWorker]) expect(span?.spanContext().traceState?.get('vendor')).toBe('opaque-1');
  for (const span of [http, call, worker, nested, nestedWorker]) expect(span?.status.code).not.toBe(SpanStatusCode.ERROR);

  // The worker's log line written inside the call names the trace and the worker's span.
  const logged = lines.find((l) => l.line['msg'] === 'average: summed by a nested call');
  expect(logged?.part).toBe(worker?.attributes[WarrenAttr.instanceId]);
  expect(logged?.line).toMatchObject({ trace_id: callerTrace, span_id: worker?.spanContext().spanId, callId: worker?.attributes['messaging.message.id'] });
});

it('marks an error answer on both sides with its JSON-RPC code', async () => {
  exporter.reset();
  const res = await fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'average', params: [], id: 2 }) });
  expect(await res.json()).toMatchObject({ error: { code: -32602 } });
  await waitFor(() => exporter.getFinishedSpans().length >= 3, { timeoutMs: 5000, intervalMs: 20, message: 'spans exported' });
  const spans = exporter.getFinishedSpans();
  // A new trace (no traceparent came): one root, the HTTP request's.
  expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
  for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
    const span = spans.find((s) => s.name === 'average' && s.kind === kind);
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes[WarrenAttr.errorCode]).toBe(-32602);
  }
});

it('puts an MCP tools/call under the trace context of its `_meta`, the worker under it', async () => {
  const mcp = new Client({ name: 'tracing-test', version: '0.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${system.url}/mcp`)));
  td.add(() => mcp.close());
  exporter.reset();
  const traceId = 'a3ce929d0e0e47364bf92f3577b34da6';
  const result = await mcp.callTool({ name: 'calculate', arguments: { expression: '1+3+6' }, _meta: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
  expect(result.isError).toBeFalsy();
  await waitFor(() => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId).length >= 3, { timeoutMs: 5000, intervalMs: 20, message: 'tools/call spans exported' });
  const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const tool = spans.find((s) => s.name === 'tools/call calculate');
  expect(tool?.kind).toBe(SpanKind.SERVER);
  expect(tool?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
  expect(tool?.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'calculate' });
  const call = spans.find((s) => s.name === 'calculate' && s.kind === SpanKind.CLIENT);
  const worker = spans.find((s) => s.name === 'calculate' && s.kind === SpanKind.SERVER);
  expect(byId(spans, call?.parentSpanContext?.spanId)).toBe(tool);
  expect(byId(spans, worker?.parentSpanContext?.spanId)).toBe(call);
});
