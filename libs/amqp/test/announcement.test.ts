import { silentLogger } from '@warren/logger';
import { parseAnnouncement, type AnnouncementParse } from '../src/discovery/announcement';
import { AnnounceOnRequest, announceNowRequest, maxAnswerDelayMs, minAnswerSpacingMs, parseAnnounceNow } from '../src/discovery/announce-now';
import { describeInstance } from '../src/runtime/describe';
import { resolveServiceOptions } from '../src/runtime/service-options';

const base = {
  v: 1, type: 'announce', service: 'svc', instanceId: 'i1', startedAt: 1, intervalMs: 10_000, methods: [], notifications: [], instanceNotifications: [], metadata: {}, running: 0, consuming: true,
};
const bytes = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const announce = (extra: Record<string, unknown> = {}): Buffer => bytes({ ...base, ...extra });
const refused = (p: AnnouncementParse): string => (p.ok ? 'accepted' : p.reason);

describe('parseAnnouncement', () => {
  it('reads a full announcement and keeps its fields', () => {
    const tracking = { state: 'degraded', since: 1_700_000_000_000, degradedTransitions: 2, untracked: 40 };
    const methods = [{ name: 'add', description: 'adds', params: { type: 'array', items: { type: 'number' } }, result: { type: 'number' }, errors: [{ code: 1, message: 'odd' }], jobStyle: true, tool: { description: 'Add', inputSchema: { type: 'object' } } }];
    const notifications = [{ name: 'updated', params: { type: 'object', properties: { id: { type: 'string' } } } }];
    const parsed = parseAnnouncement(announce({ tracking, methods, notifications, durable: true, queueType: 'quorum', metadata: { version: '1' } }));
    expect(parsed).toEqual({ ok: true, announcement: { ...base, tracking, methods, notifications, durable: true, queueType: 'quorum', metadata: { version: '1' } } });
  });

  it('fills in the optional fields and leaves out unknown ones', () => {
    const { instanceNotifications: _i, metadata: _m, running: _r, consuming: _c, ...minimal } = base;
    const parsed = parseAnnouncement(bytes({ ...minimal, methods: [{ name: 'm', future: 1 }], future: { x: 1 } }));
    expect(parsed).toEqual({ ok: true, announcement: { ...base, methods: [{ name: 'm' }], durable: false, queueType: 'classic' } });
  });

  it('reads consuming: false (an instance whose consumers RabbitMQ cancelled, re-subscribing)', () => {
    const parsed = parseAnnouncement(announce({ consuming: false }));
    expect(parsed).toMatchObject({ ok: true, announcement: { consuming: false } });
    expect(refused(parseAnnouncement(announce({ consuming: 'no' })))).toBe('schema');
  });

  it('reads a withdrawal', () => {
    expect(parseAnnouncement(bytes({ v: 1, type: 'withdraw', service: 's', instanceId: 'i' }))).toEqual({ ok: true, announcement: { v: 1, type: 'withdraw', service: 's', instanceId: 'i' } });
    expect(refused(parseAnnouncement(bytes({ type: 'withdraw', service: 's', instanceId: 'i' })))).toBe('schema');
  });

  // Each of these was accepted before (some then broke rpc.discover for everyone); each is dropped whole now.
  it.each([
    ['methods as a list of strings', { methods: ['add', 'subtract'] }],
    ['a method without a name', { methods: [{ description: 'nameless' }] }],
    ['a method whose name is a number', { methods: [{ name: 42 }] }],
    ['a method in the reserved rpc. namespace', { methods: [{ name: 'rpc.discover' }] }],
    ['a method name with a control character', { methods: [{ name: 'a\nb' }] }],
    ['a params schema that is not a schema', { methods: [{ name: 'm', params: { type: 'nope' } }] }],
    ['a params schema that is a string', { methods: [{ name: 'm', params: 'object' }] }],
    ['a tool without a description', { methods: [{ name: 'm', tool: { name: 't' } }] }],
    ['an error without a code', { methods: [{ name: 'm', errors: [{ message: 'x' }] }] }],
    ['jobStyle that is not a boolean', { methods: [{ name: 'm', jobStyle: 'yes' }] }],
    ['notifications as a list of strings', { notifications: ['update'] }],
    ['methods that are not a list', { methods: { add: {} } }],
    ['no methods', { methods: undefined }],
    ['no notifications', { notifications: undefined }],
    ['no protocol version', { v: undefined }],
    ['another protocol version', { v: 2 }],
    ['a service name outside the resource alphabet', { service: 'my service' }],
    ['an instance id that is a number', { instanceId: 7 }],
    ['a negative startedAt', { startedAt: -1 }],
    ['a fractional interval', { intervalMs: 10.5 }],
    ['metadata with a non-string value', { metadata: { version: 1 } }],
    ['a running count that is a string', { running: '3' }],
    ['an unknown queue type', { queueType: 'stream' }],
    ['a tracking report in an unknown state', { tracking: { state: 'hacked"} 1\nevil', since: 1, degradedTransitions: 0, untracked: 0 } }],
    ['a tracking report with a fractional count', { tracking: { state: 'tracking', since: 1, degradedTransitions: 0.5, untracked: 0 } }],
    ['a tracking report missing counts', { tracking: { state: 'tracking' } }],
    ['an unknown type', { type: 'hello' }],
  ])('drops an announcement with %s', (_what, extra) => {
    const parsed = parseAnnouncement(announce(extra));
    expect(parsed).toMatchObject({ ok: false, reason: 'schema', sender: expect.any(String) });
  });

  it('drops a method name longer than 255 bytes, though shorter than 255 characters', () => {
    expect(parseAnnouncement(announce({ methods: [{ name: '€'.repeat(100) }] }))).toMatchObject({ ok: false, reason: 'method_name', sender: 'svc/i1' });
    expect(refused(parseAnnouncement(announce({ methods: [{ name: '€'.repeat(85) }] })))).toBe('accepted');
  });

  it('drops what is not JSON, not an object, or too large, naming the sender when it can', () => {
    expect(parseAnnouncement(Buffer.from('not json'))).toMatchObject({ ok: false, reason: 'not_json', sender: 'unknown' });
    expect(parseAnnouncement(bytes(['announce']))).toMatchObject({ ok: false, reason: 'schema', sender: 'unknown' });
    expect(parseAnnouncement(bytes(null))).toMatchObject({ ok: false, reason: 'schema' });
    expect(parseAnnouncement(announce({ methods: 'x' }))).toMatchObject({ ok: false, sender: 'svc/i1' });
    expect(parseAnnouncement(Buffer.alloc(1024 * 1024 + 1, 0x20))).toMatchObject({ ok: false, reason: 'too_large' });
  });

  it('accepts what a Warren service announces, so the runtime and the schema agree', () => {
    const o = resolveServiceOptions({
      name: 'calc',
      instanceId: 'abc',
      durable: true,
      methods: { add: { params: { type: 'array' }, result: { type: 'number' }, jobStyle: true, errors: [{ code: 7, message: 'Seven' }], tool: { description: 'Add' }, handler: () => 1 } },
      notifications: { updated: { params: { type: 'object' }, description: 'Something changed', handler: () => undefined } },
      instanceNotifications: { flush: { handler: () => undefined } },
      metadata: { version: '1.0.0' },
    });
    const description = describeInstance(o, Date.now(), 0);
    expect(parseAnnouncement(bytes(description))).toEqual({ ok: true, announcement: description });
    expect(description).toMatchObject({ v: 1, durable: true, notifications: [{ name: 'updated', params: { type: 'object' }, description: 'Something changed' }], instanceNotifications: [{ name: 'flush' }] });
  });
});

describe('announce-now', () => {
  afterEach(() => jest.useRealTimers());

  it('reads a request and refuses anything else', () => {
    const request = announceNowRequest(200);
    expect(parseAnnounceNow(bytes(request))).toEqual(request);
    for (const bad of [{ ...request, v: 2 }, { ...request, jitterMs: -1 }, { ...request, jitterMs: 1e9 }, { ...request, type: 'announce' }, { v: 1, type: 'announce-now' }, 'announce-now']) {
      expect(parseAnnounceNow(bytes(bad))).toBeUndefined();
    }
    expect(parseAnnounceNow(Buffer.from('{'))).toBeUndefined();
  });

  it('answers once per request window, after a delay within the asked jitter (capped), and never after close', () => {
    jest.useFakeTimers();
    let announced = 0;
    const responder = new AnnounceOnRequest(() => announced++, silentLogger(), () => 0.999);
    responder.onMessage(bytes(announceNowRequest(200)));
    responder.onMessage(bytes(announceNowRequest(200)));
    jest.advanceTimersByTime(198);
    expect(announced).toBe(0);
    jest.advanceTimersByTime(1);
    expect(announced).toBe(1);
    responder.onMessage(bytes(announceNowRequest(5000)));
    jest.advanceTimersByTime(maxAnswerDelayMs);
    expect(announced).toBe(2);
    // A flood of requests asking for no delay at all is answered at most once per spacing.
    const flood = new AnnounceOnRequest(() => announced++, silentLogger(), () => 0);
    for (let t = 0; t < 1000; t += 10) {
      flood.onMessage(bytes(announceNowRequest(0)));
      jest.advanceTimersByTime(10);
    }
    expect(announced - 2).toBeLessThanOrEqual(Math.ceil(1000 / minAnswerSpacingMs) + 1);
    expect(announced - 2).toBeGreaterThanOrEqual(3);
    flood.close();
    announced = 2;
    responder.onMessage(Buffer.from('garbage'));
    responder.onMessage(bytes(announceNowRequest(100)));
    responder.close();
    jest.advanceTimersByTime(maxAnswerDelayMs);
    expect(announced).toBe(2);
  });
});
