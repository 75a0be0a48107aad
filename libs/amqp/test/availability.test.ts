import { AvailabilityGate, type QueueDepth } from '@warren/amqp';
import { ErrorCode, RpcNoConsumersError, toWireError } from '@warren/jsonrpc';
import { CancelBook, parseCancel } from '../src/wire/wire-cancel';

function gate(depths: Record<string, QueueDepth | undefined>, directory: Record<string, string>, ttlMs = 1000): { gate: AvailabilityGate; reads: string[] } {
  const reads: string[] = [];
  const g = new AvailabilityGate({ serviceOf: (m) => directory[m] }, { read: async (s) => (reads.push(s), depths[s]) }, { ttlMs });
  return { gate: g, reads };
}

describe('AvailabilityGate', () => {
  it('lets a method of an unknown service through without reading anything', () => {
    const { gate: g, reads } = gate({}, {});
    expect(g.check('add')).toBeUndefined();
    expect(reads).toEqual([]);
  });

  it('fails with RPC_NO_CONSUMERS (-32002) naming the service when its queue has no consumer, and reads once per ttl', async () => {
    const { gate: g, reads } = gate({ calc: { messages: 3, consumers: 0 } }, { add: 'calc' });
    const first = await g.check('add');
    expect(first).toMatchObject({ constructor: RpcNoConsumersError, code: 'RPC_NO_CONSUMERS', service: 'calc', method: 'add', queued: 3 });
    expect(first && toWireError(first)).toMatchObject({ code: ErrorCode.ServiceUnavailable, data: { reason: 'no_consumers', service: 'calc', method: 'add', queued: 3 } });
    expect(g.check('add')).toBeInstanceOf(RpcNoConsumersError); // from the cache, synchronously
    expect(reads).toEqual(['calc']);
  });

  it('answers synchronously from a fresh count with consumers (the hot path)', async () => {
    const { gate: g, reads } = gate({ calc: { messages: 0, consumers: 2 } }, { add: 'calc' });
    expect(await g.check('add')).toBeUndefined();
    expect(g.check('add')).toBeUndefined();
    expect(reads).toHaveLength(1);
  });

  it('reads again once the count is stale, and after forget()', async () => {
    const { gate: g, reads } = gate({ calc: { messages: 0, consumers: 1 } }, { add: 'calc' }, 0);
    await g.check('add');
    await g.check('add');
    expect(reads).toHaveLength(2);
    const { gate: h, reads: r2 } = gate({ calc: { messages: 0, consumers: 1 } }, { add: 'calc' });
    await h.check('add');
    h.forget('calc');
    await h.check('add');
    expect(r2).toHaveLength(2);
  });

  it('lets the call through when the queue does not exist (mandatory answers -32601 then)', async () => {
    const { gate: g } = gate({ calc: undefined }, { add: 'calc' });
    expect(await g.check('add')).toBeUndefined();
  });
});

describe('cancel messages', () => {
  it('reads what fits the schema and drops the rest', () => {
    expect(parseCancel(Buffer.from('{"v":1,"type":"cancel","callId":"c.1","deadline":5,"reason":"r"}'))).toEqual({ v: 1, type: 'cancel', callId: 'c.1', deadline: 5, reason: 'r' });
    expect(parseCancel(Buffer.from('{"type":"cancel","callId":"c.1"}'))).toEqual({ v: 1, type: 'cancel', callId: 'c.1' });
    for (const bad of ['x', '[]', 'null', '{"type":"cancel"}', '{"type":"cancel","callId":""}', '{"type":"cancel","callId":7}', '{"v":2,"type":"cancel","callId":"a"}', '{"type":"announce","callId":"a"}', `{"type":"cancel","callId":"${'x'.repeat(256)}"}`]) {
      expect(parseCancel(Buffer.from(bad))).toBeUndefined();
    }
  });

  it('remembers a cancel until its deadline (60 s without one), once', () => {
    const book = new CancelBook();
    book.remember('a', 1000, 0);
    book.remember('b', undefined, 0);
    expect(book.take('a', 500)).toBe(true);
    expect(book.take('a', 500)).toBe(false);
    expect(book.take('b', 70_000)).toBe(false); // forgotten after 60 s
    book.remember('c', 1000, 0);
    expect(book.take('c', 2000)).toBe(false); // past its deadline
    expect(book.take('never', 0)).toBe(false);
    // A delayed call's deadline, a day away: remembered that long.
    book.remember('d', 86_400_000, 0);
    expect(book.take('d', 86_000_000)).toBe(true);
  });
});
