import type { HandlerContext } from '@warren/amqp';
import { MemoryEventLog } from '@warren/eventlog';
import { Dispatcher, ErrorCode, type Params } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { auditMethods, auditNotifications, auditedNotifications, type AuditEntry } from '../src/methods';

function setup(service = 'audit') {
  const store = new MemoryEventLog({ maxEntries: 50 });
  const o = { store, stream: `ns.${service}` };
  const failures: unknown[] = [];
  const d = new Dispatcher<HandlerContext>({ onNotificationError: (err) => failures.push(err) });
  for (const [name, n] of Object.entries(auditNotifications(o))) d.notification(name, n);
  for (const [name, m] of Object.entries(auditMethods(service, o))) d.method(name, m);
  let seq = 0;
  const ctx = (method: string): HandlerContext =>
    ({ method, service, instanceId: 'i1', callId: `c${++seq}`, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', log: silentLogger() }) as unknown as HandlerContext;
  const notify = (method: string, params?: Params) => d.handleNotification({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }, ctx(method));
  const call = (method: string, params?: Params) => d.handleRequest({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }), id: 1 }, ctx(method));
  return { store, notify, call, failures };
}

describe('audit notifications', () => {
  it('subscribes to the five example notifications', () => {
    expect([...auditedNotifications].sort()).toEqual(['logMessage', 'notifyEvent', 'notify_hello', 'notify_sum', 'update']);
  });

  it('records what each received, newest first, with who handled it', async () => {
    const a = setup();
    await a.notify('logMessage', ['User logged in']);
    await a.notify('notifyEvent', ['EventData']);
    await a.notify('update', [1, 2, 3, 4, 5]);
    await a.notify('notify_hello', [7]);
    await a.notify('notify_sum', [1, 2, 4]);
    await a.notify('update');
    expect(a.failures).toEqual([]);
    const r = await a.call('audit.recent', { limit: 10 });
    const entries = ('result' in r ? r.result : []) as unknown as AuditEntry[];
    expect(entries.map((e) => [e.method, e.params])).toEqual([
      ['update', null],
      ['notify_sum', [1, 2, 4]],
      ['notify_hello', [7]],
      ['update', [1, 2, 3, 4, 5]],
      ['notifyEvent', ['EventData']],
      ['logMessage', ['User logged in']],
    ]);
    expect(entries[0]).toMatchObject({ service: 'audit', instanceId: 'i1', callId: 'c6', at: expect.any(Number) });
  });

  it('filters by notification and limits', async () => {
    const a = setup();
    for (let i = 0; i < 5; i++) await a.notify('notify_hello', [i]);
    await a.notify('notify_sum', [1]);
    const r = await a.call('audit.recent', { method: 'notify_hello', limit: 2 });
    expect('result' in r && (r.result as unknown as AuditEntry[]).map((e) => e.params)).toEqual([[4], [3]]);
    const byPosition = await a.call('audit.recent', [1]);
    expect('result' in byPosition && (byPosition.result as unknown as AuditEntry[]).map((e) => e.method)).toEqual(['notify_sum']);
    const all = await a.call('audit.recent');
    expect('result' in all && (all.result as unknown[]).length).toBe(6);
  });

  it('names the query method after the service, so two subscribers each answer for their own record', async () => {
    const n = setup('notifier');
    await n.notify('notify_sum', [1, 2]);
    const r = await n.call('notifier.recent');
    expect('result' in r && (r.result as unknown as AuditEntry[])[0]?.service).toBe('notifier');
    expect(await n.call('audit.recent')).toMatchObject({ error: { code: ErrorCode.MethodNotFound } });
  });

  it('drops (and reports) a notification whose params break its schema, without recording it', async () => {
    const a = setup();
    await a.notify('notify_sum', ['not a number']);
    expect(a.failures).toHaveLength(1);
    expect(await a.store.recent('ns.audit', 10)).toEqual([]);
  });

  it('refuses bad query params with -32602', async () => {
    const a = setup();
    expect(await a.call('audit.recent', { limit: 0 })).toMatchObject({ error: { code: ErrorCode.InvalidParams } });
    expect(await a.call('audit.recent', { nope: 1 })).toMatchObject({ error: { code: ErrorCode.InvalidParams } });
  });
});
