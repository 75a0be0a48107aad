// What a service logs when a handler throws (docs/services.md, "When a handler throws"): a bug is
// one `error` line on the call's logger with the message, the stack, the method, the call id and
// the trace id (params never); an answer the handler chose (a JsonRpcError) is `debug`, no stack.
import { Writable } from 'node:stream';
import { InvalidParamsError } from '@warren/jsonrpc';
import { createLogger } from '@warren/logger';
import { World, rejection, until, useWorld } from './world';

let w: World;
useWorld((made) => (w = made));

const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** A logger at `level` whose lines the test reads back, parsed. */
function capture(level = 'debug'): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      text.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger({ name: 'test', level, destination });
  return { logger, lines: () => text.join('').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const byMessage = (lines: Record<string, unknown>[], msg: string): Record<string, unknown>[] => lines.filter((l) => l['msg'] === msg);

it('logs a throwing handler once: error level, message, stack, method, call id and trace id, without the params', async () => {
  const { logger, lines } = capture();
  await w.service({
    name: 'buggy', logger,
    methods: { 'buggy.run': { handler: (p) => (p as { card: { number: string } }).card.number.toUpperCase() } },
  });
  const client = await w.client();
  const callId = client.nextCallId();
  const err = await rejection(until(client.call('buggy.run', { secret: 'hunter2' }, { traceparent: caller, id: callId })));
  expect(err).toMatchObject({ code: -32603 });
  const failures = byMessage(lines(), 'handler threw');
  expect(failures).toHaveLength(1);
  const line = failures[0] ?? {};
  expect(line).toMatchObject({ level: 50, method: 'buggy.run', callId, trace_id: '0af7651916cd43dd8448eb211c80319c', service: 'buggy', attempt: 1 });
  const logged = line['err'] as { type: string; message: string; stack: string };
  expect(logged.type).toBe('TypeError');
  expect(logged.message).toMatch(/number/);
  expect(logged.stack).toMatch(/^TypeError: .*\n\s+at /);
  expect(JSON.stringify(lines())).not.toContain('hunter2');
});

it('logs an async handler\'s rejection and a synchronous throw alike, once per call', async () => {
  const { logger, lines } = capture('info');
  await w.service({
    name: 'flaky', logger,
    methods: {
      'flaky.sync': { handler: () => { throw new Error('sync boom'); } },
      'flaky.async': { handler: async () => { await Promise.resolve(); throw new Error('async boom'); } },
    },
  });
  const client = await w.client();
  await rejection(until(client.call('flaky.sync')));
  await rejection(until(client.call('flaky.async')));
  const failures = byMessage(lines(), 'handler threw');
  expect(failures.map((l) => [l['method'], (l['err'] as { message: string }).message])).toEqual([['flaky.sync', 'sync boom'], ['flaky.async', 'async boom']]);
});

it('logs a chosen wire error (and a params check) at debug, without a stack, and nothing at info', async () => {
  const debug = capture('debug');
  const info = capture('info');
  for (const [name, { logger }] of [['strict', debug], ['strict2', info]] as const) {
    await w.service({
      name, logger,
      methods: {
        [`${name}.refuse`]: { handler: () => { throw new InvalidParamsError('amount must be positive'); } },
        [`${name}.typed`]: { params: { type: 'array', items: { type: 'number' } }, handler: () => 1 },
      },
    });
  }
  const client = await w.client();
  for (const name of ['strict', 'strict2']) {
    await expect(rejection(until(client.call(`${name}.refuse`)))).resolves.toMatchObject({ code: -32602 });
    await expect(rejection(until(client.call(`${name}.typed`, ['x'])))).resolves.toMatchObject({ code: -32602 });
  }
  const answered = byMessage(debug.lines(), 'handler answered an error');
  expect(answered.map((l) => [l['level'], l['method'], l['code']])).toEqual([[20, 'strict.refuse', -32602], [20, 'strict.typed', -32602]]);
  expect(answered.every((l) => l['err'] === undefined)).toBe(true);
  expect(debug.lines().filter((l) => (l['level'] as number) >= 40)).toEqual([]);
  expect(info.lines().filter((l) => l['method'] !== undefined)).toEqual([]);
});

it('logs a nested call\'s local error the handler let escape at warn, with its code', async () => {
  const { logger, lines } = capture('info');
  await w.service({ name: 'relay', logger, methods: { 'relay.run': { handler: (_p, ctx) => ctx.client.call('nobody.serves') } } });
  const client = await w.client();
  await expect(rejection(until(client.call('relay.run')))).resolves.toMatchObject({ code: -32601 });
  const failures = lines().filter((l) => l['method'] === 'relay.run');
  expect(failures.map((l) => [l['level'], l['code']])).toEqual([[40, 'RPC_NO_ROUTE']]);
});

it('logs a result JSON cannot hold (a BigInt, a cycle) as a bug: error level, the call id, and the caller gets -32603', async () => {
  const { logger, lines } = capture('info');
  const cycle: Record<string, unknown> = {};
  cycle['self'] = cycle;
  await w.service({
    name: 'odd', logger,
    methods: { 'odd.big': { handler: () => ({ n: 10n }) }, 'odd.cycle': { handler: () => cycle }, 'odd.fine': { handler: () => 1 } },
  });
  const client = await w.client();
  const callId = client.nextCallId();
  await expect(rejection(until(client.call('odd.big', undefined, { id: callId })))).resolves.toMatchObject({ code: -32603, data: { reason: 'result_not_serializable' } });
  await expect(rejection(until(client.call('odd.cycle')))).resolves.toMatchObject({ code: -32603 });
  await expect(until(client.call('odd.fine'))).resolves.toBe(1);
  const failures = byMessage(lines(), 'handler result is not JSON');
  expect(failures.map((l) => [l['level'], l['method'], (l['err'] as { type: string }).type])).toEqual([[50, 'odd.big', 'TypeError'], [50, 'odd.cycle', 'TypeError']]);
  expect(failures[0]).toMatchObject({ callId, service: 'odd' });
  expect((failures[0]?.['err'] as { message: string }).message).toMatch(/BigInt/);
});
