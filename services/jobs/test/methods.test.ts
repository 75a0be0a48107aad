import type { HandlerContext } from '@warren/amqp';
import { MemoryEventLog } from '@warren/eventlog';
import { Dispatcher, ErrorCode, type Params } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import type { CallStatus } from '@warren/inflight';
import { completedStream, jobsMethods, type Completion, type JobProgress, type RenderResult } from '../src/methods';

function setup(stepMs = 5) {
  const store = new MemoryEventLog();
  // What ctx.progress reported, per call: a stand-in for the in-flight store.
  const reports = new Map<string, { fraction: number; message?: string; at: number }[]>();
  const finished = new Set<string>();
  const status = async (callId: string): Promise<CallStatus> => {
    const last = reports.get(callId)?.at(-1);
    if (!last) return { callId, state: 'unknown', cancelRequested: false };
    return { callId, state: finished.has(callId) ? 'done' : 'running', worker: 'w1', attempt: 1, cancelRequested: false, progress: last };
  };
  const d = new Dispatcher<HandlerContext>();
  for (const [name, m] of Object.entries(jobsMethods({ store, prefix: 'ns.jobs', stepMs, maxSize: 50, status }))) d.method(name, m);
  const ctx = (callId: string, signal = new AbortController().signal, attempt = 1): HandlerContext =>
    ({
      method: 'report.render', service: 'jobs', instanceId: 'w1', callId, attempt, deadline: Date.now() + 10_000, signal, log: silentLogger(),
      progress: (fraction: number, message?: string) => reports.set(callId, [...(reports.get(callId) ?? []), { fraction, ...(message === undefined ? {} : { message }), at: Date.now() }]),
    }) as unknown as HandlerContext;
  const call = (method: string, params: Params | undefined, c: HandlerContext) => d.handleRequest({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), id: 1 }, c);
  return { store, ctx, call, reports, finished };
}

describe('report.render', () => {
  it('takes size steps, reports progress after each (ctx.progress) and records one completion', async () => {
    const j = setup(5);
    const started = Date.now();
    const r = await j.call('report.render', { size: 4, title: 'q3' }, j.ctx('cli.1', undefined, 2));
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 5 - 2);
    const result = ('result' in r ? r.result : undefined) as unknown as RenderResult;
    expect(result).toMatchObject({ report: 'q3-cli.1', size: 4, pages: 40, renderedBy: 'w1', attempt: 2 });
    expect(j.reports.get('cli.1')?.map((p) => p.fraction)).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(j.reports.get('cli.1')?.at(-1)?.message).toBe('page 4 of 4');
    const completions = (await j.store.recent(completedStream('ns.jobs'), 10)) as unknown as Completion[];
    expect(completions).toEqual([expect.objectContaining({ callId: 'cli.1', instanceId: 'w1', attempt: 2 })]);
  });

  it('answers report.progress from the in-flight status, by name or by position, and null for unknown calls', async () => {
    const j = setup(20);
    await j.call('report.render', { size: 2 }, j.ctx('cli.2'));
    j.reports.set('cli.2', [{ fraction: 0.5, message: 'page 1 of 2', at: 1 }]);
    const p = await j.call('report.progress', { callId: 'cli.2' }, j.ctx('x'));
    expect('result' in p && (p.result as unknown as JobProgress)).toEqual({ callId: 'cli.2', state: 'running', percent: 50, message: 'page 1 of 2', worker: 'w1', attempt: 1, updatedAt: 1 });
    j.finished.add('cli.2');
    const done = await j.call('report.progress', ['cli.2'], j.ctx('x'));
    expect('result' in done && done.result).toMatchObject({ state: 'done', percent: 100 });
    expect(await j.call('report.progress', { callId: 'nobody.1' }, j.ctx('x'))).toMatchObject({ result: null });
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
