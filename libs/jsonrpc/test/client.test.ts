import {
  CancelledError, DeadlineExceededError, Dispatcher, ErrorCode, JsonRpcClient, MethodNotFoundError, OverloadedError,
  PendingCalls, ShuttingDownError, decode, encodeResponse,
} from '@warren/jsonrpc';

/** A client wired to a dispatcher in memory: the two halves of the protocol with no transport between them. */
function linked(opts: { defaultTimeoutMs?: number; maxPending?: number; delayReplies?: boolean } = {}) {
  const server = new Dispatcher<void>()
    .method('add', { handler: (p) => (p as number[]).reduce((a, b) => a + b, 0) })
    .method('never', { handler: () => new Promise(() => undefined) });
  const held: string[] = [];
  const client = new JsonRpcClient({
    ...opts,
    send: async (payload) => {
      const answer = await server.handle(decode(payload), () => undefined);
      if (answer === null) return undefined;
      const text = encodeResponse(answer);
      if (opts.delayReplies) held.push(text);
      else return text;
      return undefined;
    },
  });
  return { client, held };
}

describe('JsonRpcClient', () => {
  afterEach(() => jest.useRealTimers());

  it('calls and gets results; errors come back as typed classes', async () => {
    const { client } = linked();
    await expect(client.call('add', [1, 2])).resolves.toBe(3);
    await expect(client.call('nope')).rejects.toBeInstanceOf(MethodNotFoundError);
    await expect(client.call('nope')).rejects.toMatchObject({ code: ErrorCode.MethodNotFound });
    expect(client.pendingCount).toBe(0);
  });

  it('answers a batch in request order whatever order replies come in', async () => {
    const { client, held } = linked({ delayReplies: true });
    const done = client.batch([{ method: 'add', params: [1, 1] }, { method: 'log', notification: true }, { method: 'add', params: [2, 2] }]);
    await Promise.resolve();
    await new Promise((r) => setImmediate(r));
    const responses = JSON.parse(held[0] ?? '[]') as unknown[];
    client.receive(JSON.stringify([...responses].reverse()));
    const results = await done;
    expect(results).toEqual([
      { status: 'fulfilled', value: 2 },
      { status: 'fulfilled', value: undefined },
      { status: 'fulfilled', value: 4 },
    ]);
  });

  it('times out with DeadlineExceeded and drops the late reply', async () => {
    jest.useFakeTimers();
    const { client, held } = linked({ delayReplies: true });
    const call = client.call('add', [1, 2], { timeoutMs: 100 });
    const assertion = expect(call).rejects.toBeInstanceOf(DeadlineExceededError);
    await jest.advanceTimersByTimeAsync(100);
    await assertion;
    client.receive(held[0] ?? '');
    expect(client.unmatchedResponses).toBe(1);
    expect(client.pendingCount).toBe(0);
  });

  it('cancels through an AbortSignal', async () => {
    const { client } = linked();
    const ac = new AbortController();
    const call = client.call('never', [], { signal: ac.signal });
    ac.abort('user');
    await expect(call).rejects.toBeInstanceOf(CancelledError);
    expect(client.pendingCount).toBe(0);
  });

  it('rejects everything on close and refuses new calls', async () => {
    const { client } = linked();
    const call = client.call('never');
    client.close();
    await expect(call).rejects.toBeInstanceOf(ShuttingDownError);
    await expect(client.call('add', [1, 1])).rejects.toBeInstanceOf(ShuttingDownError);
    client.close();
  });

  it('applies a null-id error answer to every call of that payload', async () => {
    const client = new JsonRpcClient({ send: () => '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}' });
    await expect(client.call('x')).rejects.toMatchObject({ code: ErrorCode.ParseError });
  });

  it('fails a call when sending fails', async () => {
    const client = new JsonRpcClient({ send: () => Promise.reject(new Error('socket gone')) });
    await expect(client.call('x')).rejects.toThrow('socket gone');
    expect(client.pendingCount).toBe(0);
  });
});

describe('PendingCalls', () => {
  const make = (maxPending = 2) => new PendingCalls<string, number>({ maxPending, timeoutError: () => new DeadlineExceededError(), abortError: () => new CancelledError() });

  it('is bounded and says so with Overloaded', async () => {
    const table = make(1);
    const first = table.add('a', { timeoutMs: 1000 });
    await expect(table.add('b', { timeoutMs: 1000 })).rejects.toBeInstanceOf(OverloadedError);
    table.resolve('a', 1);
    await expect(first).resolves.toBe(1);
  });

  it('runs onSettle exactly once, whatever the path', async () => {
    jest.useFakeTimers();
    const table = make();
    const outcomes: string[] = [];
    const p = table.add('a', { timeoutMs: 10, onSettle: (o) => outcomes.push(o) });
    const assertion = expect(p).rejects.toBeInstanceOf(DeadlineExceededError);
    await jest.advanceTimersByTimeAsync(10);
    await assertion;
    expect(table.resolve('a', 1)).toBe(false);
    expect(outcomes).toEqual(['timeout']);
    expect(jest.getTimerCount()).toBe(0);
    jest.useRealTimers();
  });

  it('tells one shared onSettle listener which call ended and how', async () => {
    const table = make(3);
    const seen: string[] = [];
    const listener = (outcome: string, key: string): number => seen.push(`${key}:${outcome}`);
    const ac = new AbortController();
    const a = table.add('a', { timeoutMs: 1000, onSettle: listener });
    const b = table.add('b', { timeoutMs: 1000, onSettle: listener, signal: ac.signal });
    const c = table.add('c', { timeoutMs: 1000, onSettle: listener });
    table.resolve('a', 1);
    ac.abort();
    table.reject('c', new Error('no'));
    await expect(a).resolves.toBe(1);
    await expect(b).rejects.toBeInstanceOf(CancelledError);
    await expect(c).rejects.toThrow('no');
    expect(seen).toEqual(['a:resolved', 'b:aborted', 'c:rejected']);
    expect(table.size).toBe(0);
  });

  it('rejects an already-aborted signal at once and leaves nothing behind', async () => {
    const table = make();
    await expect(table.add('a', { timeoutMs: 10, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(CancelledError);
    expect(table.size).toBe(0);
  });
});
