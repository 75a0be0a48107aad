// Tracing over the in-memory broker: with no OpenTelemetry SDK registered Warren creates no span object
// at all and still carries `traceparent` and `tracestate`; with one, a retry and a takeover are events
// on the worker's span. (The whole gateway-to-nested-worker trace: test/unit/tracing-embedded.test.ts.)
import { ProxyTracer, ProxyTracerProvider, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { RetryableError, type CallTracker } from '@warren/amqp';
import { WarrenAttr, WarrenEvent } from '../../src/tracing/call-spans';
import { outcomeOf } from '@warren/calls';
import { parseTraceparent } from '../../src/wire/trace';
import { World, settleTicks, until, useWorld } from './world';

let w: World;
useWorld((made) => (w = made));

const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('tracing off (no SDK registered)', () => {
  it('creates no span and carries the caller\'s trace and tracestate through a nested call', async () => {
    const startSpan = jest.spyOn(ProxyTracer.prototype, 'startSpan');
    const getTracer = jest.spyOn(ProxyTracerProvider.prototype, 'getTracer');
    const seen: Record<string, { traceparent: string; tracestate: string | undefined }> = {};
    await w.service({
      name: 'outer',
      methods: {
        'outer.run': { handler: async (_p, ctx) => ((seen['outer'] = { traceparent: ctx.traceparent, tracestate: ctx.tracestate }), ctx.client.call('inner.run')) },
        'inner.run': { handler: (_p, ctx) => ((seen['inner'] = { traceparent: ctx.traceparent, tracestate: ctx.tracestate }), 'ok') },
      },
    });
    const client = await w.client();
    await expect(until(client.call('outer.run', [], { traceparent: caller, tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7' }))).resolves.toBe('ok');
    expect(startSpan).not.toHaveBeenCalled();
    expect(getTracer).not.toHaveBeenCalled();
    // One trace across both hops; each hop a span id of its own; the tracestate unchanged all the way.
    const outer = parseTraceparent(seen['outer']?.traceparent);
    const inner = parseTraceparent(seen['inner']?.traceparent);
    expect([outer?.traceId, inner?.traceId]).toEqual(['0af7651916cd43dd8448eb211c80319c', '0af7651916cd43dd8448eb211c80319c']);
    expect(new Set([outer?.spanId, inner?.spanId, 'b7ad6b7169203331']).size).toBe(3);
    expect([seen['outer']?.tracestate, seen['inner']?.tracestate]).toEqual(['congo=t61rcWkgMzE,rojo=00f067aa0ba902b7', 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7']);
    startSpan.mockRestore();
    getTracer.mockRestore();
  });

  it('drops a malformed tracestate rather than carry it', async () => {
    let seen: string | undefined = 'unset';
    await w.service({ name: 'state', methods: { 'state.run': { handler: (_p, ctx) => ((seen = ctx.tracestate), 'ok') } } });
    const client = await w.client();
    await until(client.call('state.run', [], { tracestate: 'a="quoted"' }));
    expect(seen).toBeUndefined();
    await until(client.call('state.run', [], { tracestate: `k=${'v'.repeat(600)}` }));
    expect(seen).toBeUndefined();
  });
});

describe('tracing on', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  beforeAll(() => trace.setGlobalTracerProvider(provider));
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
  });
  beforeEach(() => exporter.reset());

  const serverSpans = (method: string) => exporter.getFinishedSpans().filter((s) => s.name === method && s.kind === SpanKind.SERVER);

  it('records a retry as an event on the failed attempt\'s span; both attempts are children of the one call', async () => {
    await w.service({
      name: 'flaky',
      methods: { 'flaky.run': { retry: { attempts: 2, backoffMs: 100 }, handler: (_p, ctx) => { if (ctx.attempt < 2) throw new RetryableError('not yet'); return 'second time'; } } },
    });
    const client = await w.client();
    await expect(until(client.call('flaky.run', [], { timeoutMs: 60_000 }), 20)).resolves.toBe('second time');
    const call = exporter.getFinishedSpans().find((s) => s.name === 'flaky.run' && s.kind === SpanKind.CLIENT);
    const [first, second] = serverSpans('flaky.run');
    expect([first?.parentSpanContext?.spanId, second?.parentSpanContext?.spanId]).toEqual([call?.spanContext().spanId, call?.spanContext().spanId]);
    expect(first?.events.map((e) => [e.name, e.attributes?.['warren.next_attempt']])).toEqual([[WarrenEvent.retry, 2]]);
    expect(second?.attributes[WarrenAttr.attempt]).toBe(2);
    expect(second?.events).toEqual([]);
  });

  it('records a takeover when a tracked call its previous worker lost runs again', async () => {
    const tracker: CallTracker = { run: async (call, _abort, execute) => outcomeOf(await execute({ attempt: call.attempt })) };
    const connection = w.bus.connect();
    let starts = 0;
    await w.service({
      connection, name: 'fragile', tracker,
      methods: {
        'fragile.run': {
          handler: async (_p, ctx) => {
            if (++starts > 1) return 'taken over';
            // The first worker dies mid-call: its connection goes, RabbitMQ redelivers the request.
            queueMicrotask(() => void connection.simulateLoss());
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
            return 'unreachable';
          },
        },
      },
    });
    const client = await w.client();
    const answer = client.call('fragile.run', [], { timeoutMs: 60_000 });
    await settleTicks();
    await expect(until(answer, 20)).resolves.toBe('taken over');
    const taken = serverSpans('fragile.run').find((s) => s.events.some((e) => e.name === WarrenEvent.takeover));
    expect(taken?.attributes[WarrenAttr.attempt]).toBeGreaterThan(1);
  });

  it('follows a notification: the publisher\'s producer span, each subscriber\'s consumer span under it', async () => {
    let heard = 0;
    await w.service({ name: 'listener', notifications: { 'listener.heard': { handler: () => void heard++ } } });
    const client = await w.client();
    await until(client.notify('listener.heard', []));
    await until((async () => { while (heard === 0) await settleTicks(); })());
    const spans = exporter.getFinishedSpans().filter((s) => s.name === 'listener.heard');
    const producer = spans.find((s) => s.kind === SpanKind.PRODUCER);
    const consumer = spans.find((s) => s.kind === SpanKind.CONSUMER);
    expect(consumer?.parentSpanContext?.spanId).toBe(producer?.spanContext().spanId);
    expect(consumer?.attributes['messaging.message.id']).toBe(producer?.attributes['messaging.message.id']);
  });
});
