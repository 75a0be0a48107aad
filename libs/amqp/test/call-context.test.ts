// The handler context and its abort are built lazily for speed; these tests pin down that laziness
// never changes what a handler observes: one signal, one span id, a reason whichever way it fired.
import { silentLogger } from '@warren/logger';
import type { RpcClient } from '../src/engine/client';
import { CallAbort } from '../src/runtime/call-abort';
import { CallContext, type CallFacts } from '../src/runtime/context';

const facts: CallFacts = { callId: 'c.1', method: 'add', id: 7, deadline: Date.now() + 1000, attempt: 1, parentTrace: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
const owner = { service: 'calc', instanceId: 'i1', log: silentLogger(), client: {} as RpcClient, progressSink: () => () => undefined };

describe('CallAbort', () => {
  it('gives an already-aborted signal carrying the reason when asked for it after the abort', () => {
    const abort = new CallAbort();
    const reason = new Error('deadline');
    abort.abort(reason);
    expect(abort.aborted).toBe(true);
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe(reason);
  });

  it('fires a signal taken before the abort, once, and ignores later aborts', () => {
    const abort = new CallAbort();
    const seen: unknown[] = [];
    abort.signal.addEventListener('abort', () => seen.push(abort.signal.reason));
    abort.abort('first');
    abort.abort('second');
    expect(seen).toEqual(['first']);
    expect(abort.reason).toBe('first');
  });

  it('defaults the reason to an AbortError, as AbortController does', () => {
    const abort = new CallAbort();
    abort.abort();
    expect((abort.reason as DOMException).name).toBe('AbortError');
    expect(abort.signal.reason).toBe(abort.reason);
  });

  it('race: the work wins when it settles first, the abort when it comes first', async () => {
    const won = new CallAbort();
    await expect(won.race(Promise.resolve(5), 'aborted')).resolves.toBe(5);
    won.abort();
    await expect(won.race(Promise.resolve(5), 'aborted')).resolves.toBe('aborted');

    const lost = new CallAbort();
    const racing = lost.race(new Promise(() => undefined), 'aborted');
    lost.abort(new Error('cancelled'));
    await expect(racing).resolves.toBe('aborted');
  });

  it('race passes a rejection of the work through, and a later abort finds nobody watching', async () => {
    const abort = new CallAbort();
    await expect(abort.race(Promise.reject(new Error('boom')), 'aborted')).rejects.toThrow('boom');
    expect(() => abort.abort()).not.toThrow();
  });
});

describe('CallContext', () => {
  it('carries the call facts and the owner', () => {
    const ctx = new CallContext(facts, new CallAbort(), owner);
    expect([ctx.callId, ctx.method, ctx.id, ctx.deadline, ctx.attempt, ctx.service, ctx.instanceId]).toEqual(['c.1', 'add', 7, facts.deadline, 1, 'calc', 'i1']);
  });

  it('makes one span under the caller trace, the same each time it is read', () => {
    const ctx = new CallContext(facts, new CallAbort(), owner);
    expect(ctx.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(ctx.traceparent).not.toContain('b7ad6b7169203331');
    expect(ctx.traceparent).toBe(ctx.traceparent);
  });

  it('starts a new trace when the caller sent none or an invalid one', () => {
    const ctx = new CallContext({ ...facts, parentTrace: 'garbage' }, new CallAbort(), owner);
    expect(ctx.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(ctx.traceparent).not.toContain('0af7651916cd43dd8448eb211c80319c');
  });

  it('exposes the call abort as its signal, and the same logger and client on every read', () => {
    const abort = new CallAbort();
    const ctx = new CallContext(facts, abort, owner);
    expect(ctx.signal).toBe(ctx.signal);
    abort.abort('cancelled');
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.log).toBe(ctx.log);
    expect(ctx.client).toBe(ctx.client);
  });
});
