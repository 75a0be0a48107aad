// One authorization rule at every door (broker/src/authz.ts, docs/gateway.md "Token scopes"): per
// token kind (client, operator, no auth) and per door (POST /rpc, MCP tools/call over SSE and
// Streamable HTTP, the CLI's gateway caller), every inflight.*, history.list, calls.show, dlq.*, workers.* and
// schedule.* method is allowed or refused with -32006 and the reason the docs name (schedule.list is
// anyone's, changes an operator's); a client token lists only its own calls and
// cannot cancel another's (which keeps running). The console's feed is the fourth door: 403 for a
// client token, 401 for a wrong one. Embedded mode (in-memory RabbitMQ and store) so the test
// needs no names of its own on the machine's brokers.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startService } from '@warren/amqp';
import { createMemoryTracker } from '@warren/inflight';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { GatewayCaller, GatewayView } from '../../libs/cli/src/gateway-caller';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';

const td = new Teardown();
afterAll(() => td.run());

type Kind = 'client' | 'operator' | 'no-auth';
type DoorName = 'POST /rpc' | 'MCP SSE' | 'MCP Streamable HTTP' | 'CLI via gateway';
/** What a door answered: a result, a refusal of the rule (its reason), or another error (allowed, but failed: e.g. no such dead letter). */
type Answer = { readonly kind: 'result'; readonly value: unknown } | { readonly kind: 'denied'; readonly reason: unknown } | { readonly kind: 'error'; readonly code: number | undefined };

interface Door {
  call(method: string, params: Record<string, unknown>): Promise<Answer>;
  tools?(): Promise<string[]>;
  close(): Promise<void>;
}

const tokens = { client: 'client-a-token', other: 'client-b-token', operator: 'operator-token' };
const systems = new Map<'auth' | 'none', EmbeddedSystem>();
/** Releases every held call still running (at teardown). */
const held = new Set<() => void>();

beforeAll(async () => {
  for (const mode of ['auth', 'none'] as const) {
    const env = mode === 'auth'
      ? { GATEWAY_PORT: '0', GATEWAY_TOKENS: `${tokens.client},${tokens.other}`, GATEWAY_OPERATOR_TOKENS: tokens.operator }
      : { GATEWAY_PORT: '0', GATEWAY_AUTH: 'none' };
    const system = await startEmbedded(env, () => silentLogger(), { instances: [{ name: 'calculator-1', service: 'calculator' }], broker: { brokerTools: true } });
    td.add(() => system.close());
    const holder = await startService({
      connection: system.bus.connect(),
      name: 'holder',
      tracker: createMemoryTracker(system.inflight),
      methods: {
        // Runs until cancelled, or released at teardown.
        hold: {
          handler: (_p, ctx) => new Promise<string>((resolve) => {
            const release = (): void => resolve('released');
            held.add(release);
            ctx.signal.addEventListener('abort', () => {
              held.delete(release);
              resolve('aborted');
            }, { once: true });
          }),
        },
      },
    });
    td.add(() => holder.close());
    td.add(async () => {
      for (const release of held) release();
    });
    await waitFor(() => system.broker.gateway.catalogue.current().methods.has('hold') && system.broker.gateway.catalogue.current().tools.has('workers.pause'), { message: 'hold and the broker tools known' });
    systems.set(mode, system);
  }
}, 60_000);

function systemFor(kind: Kind): EmbeddedSystem {
  const s = systems.get(kind === 'no-auth' ? 'none' : 'auth');
  if (!s) throw new Error('not started');
  return s;
}

function tokenOf(kind: Kind): string | undefined {
  return kind === 'no-auth' ? undefined : kind === 'client' ? tokens.client : tokens.operator;
}

function authHeaders(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

function fromError(error: { code?: number; data?: unknown }): Answer {
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return error.code === ErrorCode.Unauthorized ? { kind: 'denied', reason } : { kind: 'error', code: error.code };
}

async function openDoor(name: DoorName, url: string, token: string | undefined): Promise<Door> {
  switch (name) {
    case 'POST /rpc':
      return {
        async call(method, params) {
          const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders(token) }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
          const body = (await res.json()) as { result?: unknown; error?: { code: number; data?: unknown } };
          return body.error ? fromError(body.error) : { kind: 'result', value: body.result };
        },
        close: () => Promise.resolve(),
      };
    case 'MCP SSE':
    case 'MCP Streamable HTTP': {
      const headers = authHeaders(token);
      const transport = name === 'MCP SSE'
        ? new SSEClientTransport(new URL(`${url}/sse`), { requestInit: { headers }, eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) } })
        : new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
      const client = new Client({ name: 'authz-test', version: '0.0.0' });
      await client.connect(transport);
      return {
        async call(method, params) {
          try {
            const r = await client.callTool({ name: method, arguments: params });
            return r.isError === true ? { kind: 'error', code: undefined } : { kind: 'result', value: (r.structuredContent as { result?: unknown } | undefined)?.result };
          } catch (err) {
            if (err instanceof McpError) return fromError(err);
            throw err;
          }
        },
        tools: async () => (await client.listTools()).tools.map((t) => t.name),
        close: () => client.close(),
      };
    }
    case 'CLI via gateway': {
      // What `warren --via gateway inflight|status|cancel|dlq ...` calls through.
      const caller = new GatewayCaller(url, token, 5000);
      const view = new GatewayView(caller);
      return {
        async call(method, params) {
          try {
            const callId = String(params['callId']);
            const value = method === 'inflight.list' ? await view.list()
              : method === 'inflight.status' ? await view.status(callId)
                : method === 'inflight.cancel' ? await view.cancel(callId)
                  : await caller.call(method, params as never);
            return { kind: 'result', value };
          } catch (err) {
            if (err instanceof JsonRpcError) return fromError(err);
            throw err;
          }
        },
        close: () => caller.close(),
      };
    }
  }
}

/** Starts a `hold` call through POST /rpc with `token`; resolves with its call id once the store lists it running, and its answer. */
async function holdCall(system: EmbeddedSystem, token: string | undefined): Promise<{ callId: string; answer: Promise<{ error?: { code: number } }> }> {
  const before = new Set(system.broker.gateway.calls.list().map((c) => c.callId));
  const answer = fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-timeout-ms': '60000', ...authHeaders(token) }, body: '{"jsonrpc":"2.0","method":"hold","id":7}' })
    .then((r) => r.json() as Promise<{ error?: { code: number } }>);
  let callId = '';
  await waitFor(() => {
    callId = system.broker.gateway.calls.list().find((c) => c.method === 'hold' && !before.has(c.callId))?.callId ?? '';
    return callId !== '';
  }, { message: 'hold call relayed' });
  const view = new GatewayView(new GatewayCaller(system.url, tokens.operator, 5000));
  await waitFor(async () => (await view.list()).some((c) => c.callId === callId), { message: 'hold call running in the store' });
  return { callId, answer };
}

const doors: readonly DoorName[] = ['POST /rpc', 'MCP SSE', 'MCP Streamable HTTP', 'CLI via gateway'];
const kinds: readonly Kind[] = ['client', 'operator', 'no-auth'];
const dlqCalls: readonly [string, Record<string, unknown>][] = [
  ['dlq.list', {}],
  ['dlq.show', { service: 'calculator', id: 'no-such-dead-letter' }],
  ['dlq.replay', { service: 'calculator', id: 'no-such-dead-letter' }],
  ['dlq.purge', { service: 'holder' }],
];

/** Every schedule change, in an order that succeeds for an operator (the schedule is left removed). */
const scheduleChanges = (name: string): [string, Record<string, unknown>][] => [
  ['schedule.add', { name, method: 'add', params: [1, 2], everyMs: 3_600_000, paused: true }],
  ['schedule.pause', { name }],
  ['schedule.resume', { name }],
  ['schedule.runNow', { name }],
  ['schedule.remove', { name }],
];

describe.each(kinds)('a %s', (kind) => {
  it.each(doors)('through %s: sees and cancels only what the rule allows', async (doorName) => {
    const system = systemFor(kind);
    const seesAll = kind !== 'client';
    const door = await openDoor(doorName, system.url, tokenOf(kind));
    try {
      // Mine: made with the asker's token; theirs: with another client token (anonymous without auth).
      const mine = await holdCall(system, tokenOf(kind));
      const theirs = await holdCall(system, kind === 'no-auth' ? undefined : tokens.other);

      const listed = await door.call('inflight.list', {});
      expect(listed.kind).toBe('result');
      const ids = (listed as { value: { callId: string }[] }).value.map((c) => c.callId);
      expect(ids).toContain(mine.callId);
      expect(ids.includes(theirs.callId)).toBe(seesAll);

      expect(await door.call('inflight.status', { callId: mine.callId })).toMatchObject({ kind: 'result', value: { state: 'running' } });
      expect(await door.call('inflight.status', { callId: theirs.callId })).toEqual(seesAll ? expect.objectContaining({ kind: 'result' }) : { kind: 'denied', reason: 'not_your_call' });
      expect((await door.call('inflight.workers', {})).kind).toBe(seesAll ? 'result' : 'denied');

      for (const [method, params] of dlqCalls) {
        const answer = await door.call(method, params);
        if (seesAll) expect(answer.kind).not.toBe('denied');
        else expect(answer).toEqual({ kind: 'denied', reason: 'operator_token_required' });
      }

      // Worker controls: an operator's, each applied and echoed by the instance (pause, then resume, so it ends consuming).
      for (const method of ['workers.pause', 'workers.resume']) {
        const answer = await door.call(method, { instanceId: 'calculator-1', service: 'calculator' });
        if (seesAll) expect(answer).toMatchObject({ kind: 'result', value: { applied: true, worker: { paused: method === 'workers.pause' } } });
        else expect(answer).toEqual({ kind: 'denied', reason: 'operator_token_required' });
      }

      // Schedules: anyone lists them; changing them (and running one now) is an operator's.
      expect((await door.call('schedule.list', {})).kind).toBe('result');
      const name = `door-${kind}-${doorName.replace(/[^A-Za-z]/g, '')}`;
      for (const [method, params] of scheduleChanges(name)) {
        const answer = await door.call(method, params);
        if (seesAll) expect(answer.kind).toBe('result');
        else expect(answer).toEqual({ kind: 'denied', reason: 'operator_token_required' });
      }

      const cancelTheirs = await door.call('inflight.cancel', { callId: theirs.callId });
      const operatorView = new GatewayView(new GatewayCaller(system.url, kind === 'no-auth' ? undefined : tokens.operator, 5000));
      if (seesAll) {
        expect(cancelTheirs.kind).toBe('result');
        expect((await theirs.answer).error?.code).toBe(ErrorCode.Cancelled);
      } else {
        expect(cancelTheirs).toEqual({ kind: 'denied', reason: 'not_your_call' });
        expect((await operatorView.status(theirs.callId)).state).toBe('running');
        expect(await operatorView.cancel(theirs.callId)).toMatchObject({ outcome: expect.any(String) });
        expect((await theirs.answer).error?.code).toBe(ErrorCode.Cancelled);
      }
      expect((await door.call('inflight.cancel', { callId: mine.callId })).kind).toBe('result');
      expect((await mine.answer).error?.code).toBe(ErrorCode.Cancelled);

      // The outcome history and call detail: a client token's page holds its own calls only, and it looks up only its own.
      const historyIds = async (): Promise<string[]> => {
        const page = await door.call('history.list', { method: 'hold', state: 'cancelled', limit: 500 });
        expect(page.kind).toBe('result');
        return (page as { value: { items: { callId: string }[] } }).value.items.map((c) => c.callId);
      };
      await waitFor(async () => (await historyIds()).includes(mine.callId), { message: 'own cancelled call in the history' });
      if (seesAll) await waitFor(async () => (await historyIds()).includes(theirs.callId), { message: "another's call in the history" });
      else expect(await historyIds()).not.toContain(theirs.callId);
      expect(await door.call('calls.show', { callId: mine.callId })).toMatchObject({ kind: 'result', value: { callId: mine.callId, state: 'cancelled', method: 'hold' } });
      expect(await door.call('calls.show', { callId: theirs.callId })).toEqual(seesAll ? expect.objectContaining({ kind: 'result' }) : { kind: 'denied', reason: 'not_your_call' });

      if (door.tools) {
        const names = await door.tools();
        expect(names).toEqual(expect.arrayContaining(['inflight.list', 'inflight.status', 'inflight.cancel', 'history.list', 'calls.show']));
        expect(names.filter((n) => n.startsWith('dlq.') || n.startsWith('workers.') || n === 'inflight.workers').sort()).toEqual(seesAll ? ['dlq.list', 'dlq.purge', 'dlq.replay', 'dlq.show', 'inflight.workers', 'workers.cancelAll', 'workers.drain', 'workers.pause', 'workers.resume'] : []);
      }
    } finally {
      await door.close();
    }
  });
});

describe('the console feed', () => {
  it.each([
    ['a client token', tokens.client, 403, 'operator_token_required'],
    ['a wrong token', 'not-a-token', 401, 'missing_or_invalid_token'],
    ['an operator token', tokens.operator, 200, undefined],
  ] as const)('answers %s (%s) with HTTP %i', async (_name, token, status, reason) => {
    const system = systemFor('operator');
    const abort = new AbortController();
    const res = await fetch(`${system.url}/console/events`, { headers: authHeaders(token), signal: abort.signal });
    try {
      expect(res.status).toBe(status);
      if (reason !== undefined) expect(await res.json()).toMatchObject({ error: { code: ErrorCode.Unauthorized, data: { reason } } });
    } finally {
      abort.abort();
    }
  });

  it('is open without auth', async () => {
    const abort = new AbortController();
    const res = await fetch(`${systemFor('no-auth').url}/console/events`, { signal: abort.signal });
    expect(res.status).toBe(200);
    abort.abort();
  });
});

describe('delayed.list and delayed.cancel through POST /rpc', () => {
  /** Sends a delayed `add` (a minute away) with `token`; resolves with its call id once listed, and its HTTP answer. */
  async function delayedCall(system: EmbeddedSystem, token: string): Promise<{ callId: string; hangUp: () => void; answer: Promise<unknown> }> {
    const before = new Set(system.broker.gateway.calls.list().map((c) => c.callId));
    const abort = new AbortController();
    const answer = fetch(`${system.url}/rpc`, { method: 'POST', signal: abort.signal, headers: { 'content-type': 'application/json', 'x-delay-ms': '60000', ...authHeaders(token) }, body: '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":8}' }).catch(() => undefined);
    let callId = '';
    await waitFor(() => {
      callId = system.broker.gateway.calls.list().find((c) => c.method === 'add' && !before.has(c.callId))?.callId ?? '';
      return callId !== '';
    }, { message: 'delayed call relayed' });
    return { callId, hangUp: () => abort.abort(), answer };
  }

  it('lists a client token its own delayed calls only, lets it cancel only those; an operator sees and cancels all', async () => {
    const system = systemFor('client');
    const client = await openDoor('POST /rpc', system.url, tokens.client);
    const operator = await openDoor('POST /rpc', system.url, tokens.operator);
    const mine = await delayedCall(system, tokens.client);
    const theirs = await delayedCall(system, tokens.other);
    try {
      const ids = async (door: Door): Promise<string[]> => ((await door.call('delayed.list', {})) as { value: { calls: { callId: string }[] } }).value.calls.map((c) => c.callId);
      await waitFor(async () => (await ids(operator)).length === 2, { message: 'both listed' });
      expect(await ids(client)).toEqual([mine.callId]);
      expect(await client.call('delayed.cancel', { callId: theirs.callId })).toEqual({ kind: 'denied', reason: 'not_your_call' });
      expect(await client.call('delayed.cancel', { callId: mine.callId })).toMatchObject({ kind: 'result', value: { listed: true } });
      expect(await operator.call('delayed.cancel', { callId: theirs.callId })).toMatchObject({ kind: 'result', value: { listed: true } });
      expect(await ids(operator)).toEqual([]);
    } finally {
      mine.hangUp();
      theirs.hangUp();
      await Promise.all([mine.answer, theirs.answer]);
      await client.close();
      await operator.close();
    }
  });
});

// The console's bulk cancel is a JSON-RPC batch of inflight.cancel through POST /rpc (broker/console/src/bulk-cancel.ts):
// the rule judges each entry on its own, so a batch can do nothing its entries could not do one by one.
describe('a bulk cancel (a batch of inflight.cancel through POST /rpc)', () => {
  async function batchCancel(system: EmbeddedSystem, token: string, callIds: readonly string[]): Promise<Answer[]> {
    const body = callIds.map((callId, i) => ({ jsonrpc: '2.0', method: 'inflight.cancel', params: { callId }, id: i }));
    const res = await fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders(token) }, body: JSON.stringify(body) });
    const answers = (await res.json()) as { id: number; result?: unknown; error?: { code: number; data?: unknown } }[];
    return [...answers].sort((a, b) => a.id - b.id).map((a) => (a.error ? fromError(a.error) : { kind: 'result', value: a.result }));
  }

  it('cancels a client token\'s own calls and refuses, per entry, another\'s (which keeps running)', async () => {
    const system = systemFor('client');
    const mine = [await holdCall(system, tokens.client), await holdCall(system, tokens.client)];
    const theirs = await holdCall(system, tokens.other);
    const answers = await batchCancel(system, tokens.client, [mine[0]!.callId, theirs.callId, mine[1]!.callId]);
    expect(answers.map((a) => a.kind)).toEqual(['result', 'denied', 'result']);
    expect(answers[1]).toEqual({ kind: 'denied', reason: 'not_your_call' });
    for (const m of mine) expect((await m.answer).error?.code).toBe(ErrorCode.Cancelled);
    const operatorView = new GatewayView(new GatewayCaller(system.url, tokens.operator, 5000));
    expect((await operatorView.status(theirs.callId)).state).toBe('running');
    await operatorView.cancel(theirs.callId);
    expect((await theirs.answer).error?.code).toBe(ErrorCode.Cancelled);
  });

  it('cancels anyone\'s calls with an operator token', async () => {
    const system = systemFor('operator');
    const calls = [await holdCall(system, tokens.client), await holdCall(system, tokens.other)];
    const answers = await batchCancel(system, tokens.operator, calls.map((c) => c.callId));
    expect(answers.map((a) => a.kind)).toEqual(['result', 'result']);
    for (const c of calls) expect((await c.answer).error?.code).toBe(ErrorCode.Cancelled);
  });
});
