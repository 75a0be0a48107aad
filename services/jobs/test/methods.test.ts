import type { HandlerContext } from '@warren/amqp';
import { MemoryEventLog } from '@warren/eventlog';
import { Dispatcher, ErrorCode, type Params } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { completedStream, jobsMethods, progressRecord, type Completion, type JobProgress, type RenderResult } from '../src/methods';

function setup(stepMs = 5) {
  const store = new MemoryEventLog();
  const d = new Dispatcher<HandlerContext>();
  for (const [name, m] of Object.entries(jobsMethods({ store, prefix: 'ns.jobs', stepMs, maxSize: 50 }))) d.method(name, m);
  /** What each call reported through ctx.progress, by call id. */
  const reported = new Map<string, [number, string | undefined][]>();
  const ctx = (callId: string, signal = new AbortController().signal, attempt = 1): HandlerContext =>
    ({
      method: 'report.render', service: 'jobs', instanceId: 'w1', callId, attempt, deadline: Date.now() + 10_000, signal, log: silentLogger(),
      progress: (fraction: number, message?: string) => reported.set(callId, [...(reported.get(callId) ?? []), [fraction, message]]),
    }) as unknown as HandlerContext;
  const call = (method: string, params: Params | undefined, c: HandlerContext) => d.handleRequest({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), id: 1 }, c);
  return { store, ctx, call, reported };
}

describe('report.render', () => {
  it('takes size steps, records progress after each and one completion', async () => {
    const j = setup(5);
    const started = Date.now();
    const r = await j.call('report.render', { size: 4, title: 'q3' }, j.ctx('cli.1', undefined, 2));
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 5 - 2);
    const result = ('result' in r ? r.result : undefined) as unknown as RenderResult;
    expect(result).toMatchObject({ report: 'q3-cli.1', size: 4, pages: 40, renderedBy: 'w1', attempt: 2 });
    const progress = (await j.store.get(progressRecord('ns.jobs', 'cli.1'))) as unknown as JobProgress;
    expect(progress).toMatchObject({ callId: 'cli.1', state: 'done', step: 4, of: 4, percent: 100, instanceId: 'w1' });
    const completions = (await j.store.recent(completedStream('ns.jobs'), 10)) as unknown as Completion[];
    expect(completions).toEqual([expect.objectContaining({ callId: 'cli.1', instanceId: 'w1', attempt: 2 })]);
    // The framework's progress too (ctx.progress), once per step.
    expect(j.reported.get('cli.1')).toEqual([[0.25, 'page 10 of 40'], [0.5, 'page 20 of 40'], [0.75, 'page 30 of 40'], [1, 'page 40 of 40']]);
  });

  it('answers report.progress while it runs, by name or by position, and null for unknown calls', async () => {
    const j = setup(20);
    const running = j.call('report.render', { size: 5 }, j.ctx('cli.2'));
    await new Promise((r) => setTimeout(r, 50));
    const p = await j.call('report.progress', { callId: 'cli.2' }, j.ctx('x'));
    expect('result' in p && p.result).toMatchObject({ state: 'running', of: 5 });
    expect(('result' in p && (p.result as unknown as JobProgress).step) || 0).toBeLessThan(5);
    await running;
    const done = await j.call('report.progress', ['cli.2'], j.ctx('x'));
    expect('result' in done && done.result).toMatchObject({ state: 'done', step: 5 });
    expect(await j.call('report.progress', { callId: 'nobody.1' }, j.ctx('x'))).toMatchObject({ result: null });
    // A call id outside the record alphabet was never recorded: null, not an error.
    expect(await j.call('report.progress', { callId: '*/weird id' }, j.ctx('x'))).toMatchObject({ result: null });
  });

  it('stops at once when its signal fires (cancel, deadline, shutdown), recording no completion', async () => {
    const j = setup(1000);
    const ac = new AbortController();
    const running = j.call('report.render', { size: 10 }, j.ctx('cli.3', ac.signal));
    setTimeout(() => ac.abort(new Error('cancelled')), 20);
    const started = Date.now();
    const r = await running;
    expect(Date.now() - started).toBeLessThan(900);
    expect(r).toMatchObject({ error: { code: ErrorCode.InternalError } });
    expect(await j.store.recent(completedStream('ns.jobs'), 10)).toEqual([]);
  });

  it.each<[Params | undefined]>([[undefined], [{}], [{ size: 0 }], [{ size: 51 }], [{ size: 1.5 }], [{ size: 1, extra: 1 }], [[3]]])('refuses %j with -32602', async (params) => {
    const j = setup();
    expect(await j.call('report.render', params, j.ctx('cli.4'))).toMatchObject({ error: { code: ErrorCode.InvalidParams } });
  });
});
