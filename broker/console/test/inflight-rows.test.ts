// In flight's rows as data (issue 27): sort by any column with stable ties, the link's sort, filters,
// counts by group, and the page's copy of the calls kept from the feed's deltas.
import { countBy, filterRows, formatSort, nextSort, parseSort, rowsOf, sortRows, type Row } from '../src/inflight-rows';
import { InflightMirror } from '../src/inflight-mirror';
import type { ClusterCall, InflightEvent } from '../src/types';

const call = (callId: string, more: Partial<ClusterCall> = {}): ClusterCall => ({ callId, method: 'add', ...more });
const event = (calls: ClusterCall[], gateway: InflightEvent['gateway'] = []): InflightEvent => ({ at: 1000, configured: true, calls, gateway });
const ids = (rows: readonly Row[]): string[] => rows.map((r) => r.callId);

test('rows: the cluster\'s calls, then gateway calls no worker took yet as relaying; notifications left out', () => {
  const rows = rowsOf(event([call('a')], [{ callId: 'a', method: 'add', via: 'http', startedAt: 1 }, { callId: 'g', method: 'mul', via: 'mcp', startedAt: 2 }, { callId: 'notification.1', method: 'x', via: 'http', startedAt: 3 }]));
  expect(rows.map((r) => [r.callId, r.source, r.state])).toEqual([['a', 'cluster', undefined], ['g', 'gateway', 'relaying (mcp)']]);
});

test('rows: calls waiting in RabbitMQ that their callers marked are queued rows; one this gateway relays says it relays it', () => {
  const rows = rowsOf(event(
    [call('q', { state: 'queued', service: 'calc', worker: '', attempt: 0, startedAt: 5 }), call('h', { state: 'queued', service: 'calc', worker: '', attempt: 0, startedAt: 6 })],
    [{ callId: 'h', method: 'add', via: 'http', startedAt: 6 }],
  ));
  expect(rows.map((r) => [r.callId, r.source, r.state, r.service])).toEqual([['q', 'cluster', 'queued', 'calc'], ['h', 'gateway', 'relaying (http)', 'calc']]);
  expect(countBy(rows, 'state')).toEqual([{ key: 'queued', count: 1 }, { key: 'relaying (http)', count: 1 }]);
  expect(countBy(rows, 'worker')).toEqual([{ key: '(queued)', count: 1 }, { key: '(relaying (http))', count: 1 }]);
});

test('sort by any column, both ways; missing values last; ties by call id, so equal rows keep their places', () => {
  const rows = rowsOf(event([
    call('c', { method: 'mul', startedAt: 30, attempt: 2, progress: { fraction: 0.1, at: 0 } }),
    call('a', { method: 'add', startedAt: 10, attempt: 1 }),
    call('b', { method: 'add', startedAt: 20, attempt: 1, progress: { fraction: 0.9, at: 0 } }),
  ]));
  expect(ids(sortRows(rows, { key: 'age', dir: 'desc' }))).toEqual(['a', 'b', 'c']);
  expect(ids(sortRows(rows, { key: 'age', dir: 'asc' }))).toEqual(['c', 'b', 'a']);
  expect(ids(sortRows(rows, { key: 'method', dir: 'asc' }))).toEqual(['a', 'b', 'c']);
  expect(ids(sortRows(rows, { key: 'method', dir: 'desc' }))).toEqual(['c', 'a', 'b']);
  expect(ids(sortRows(rows, { key: 'attempt', dir: 'desc' }))).toEqual(['c', 'a', 'b']);
  expect(ids(sortRows(rows, { key: 'progress', dir: 'desc' }))).toEqual(['b', 'c', 'a']);
  expect(ids(sortRows(rows, { key: 'progress', dir: 'asc' }))).toEqual(['c', 'b', 'a']);
});

test('the link\'s sort: a key, "-" for descending; unknown ones and the default are the default', () => {
  expect(parseSort('method')).toEqual({ key: 'method', dir: 'asc' });
  expect(parseSort('-deadline')).toEqual({ key: 'deadline', dir: 'desc' });
  expect(parseSort('nonsense')).toEqual({ key: 'age', dir: 'desc' });
  expect(formatSort({ key: 'age', dir: 'desc' })).toBeUndefined();
  expect(formatSort({ key: 'worker', dir: 'desc' })).toBe('-worker');
  expect(nextSort({ key: 'method', dir: 'asc' }, 'method')).toEqual({ key: 'method', dir: 'desc' });
  expect(nextSort({ key: 'method', dir: 'asc' }, 'age')).toEqual({ key: 'age', dir: 'desc' });
});

test('filters: free text over id, method, service and worker; an exact method', () => {
  const rows = rowsOf(event([call('x.1', { method: 'add', worker: 'calc-1' }), call('x.2', { method: 'addmore', service: 'jobs' })]));
  expect(ids(filterRows(rows, { text: 'CALC' }))).toEqual(['x.1']);
  expect(ids(filterRows(rows, { text: 'add' }))).toEqual(['x.1', 'x.2']);
  expect(ids(filterRows(rows, { text: '', method: 'add' }))).toEqual(['x.1']);
});

test('counts by method, worker (or the state of calls no worker has) and state, largest first', () => {
  const rows = rowsOf(event([call('1', { worker: 'w1', state: 'running' }), call('2', { worker: 'w1', state: 'running' }), call('3', { method: 'mul', state: 'retrying' })], [{ callId: 'g', method: 'mul', via: 'http', startedAt: 0 }]));
  expect(countBy(rows, 'method')).toEqual([{ key: 'add', count: 2 }, { key: 'mul', count: 2 }]);
  expect(countBy(rows, 'worker')).toEqual([{ key: 'w1', count: 2 }, { key: '(relaying (http))', count: 1 }, { key: '(retrying)', count: 1 }]);
  expect(countBy(rows, 'state')).toEqual([{ key: 'running', count: 2 }, { key: 'relaying (http)', count: 1 }, { key: 'retrying', count: 1 }]);
});

test('the mirror: whole list, then deltas; an unchanged call keeps its object; no delta before a whole list', () => {
  const mirror = new InflightMirror();
  expect(mirror.delta({ at: 1, configured: true, calls: { upsert: [call('a')], remove: [] }, gateway: { upsert: [], remove: [] } })).toBeUndefined();
  const a = call('a');
  const b = call('b');
  mirror.full(event([a, b]));
  const next = mirror.delta({ at: 2, configured: true, calls: { upsert: [call('b', { attempt: 2 }), call('c')], remove: ['a'] }, gateway: { upsert: [{ callId: 'g', method: 'add', via: 'http', startedAt: 0 }], remove: [] } });
  expect(next?.calls.map((c) => [c.callId, c.attempt])).toEqual([['b', 2], ['c', undefined]]);
  expect(next?.gateway.map((g) => g.callId)).toEqual(['g']);
  const again = mirror.delta({ at: 3, configured: true, calls: { upsert: [], remove: [] }, gateway: { upsert: [], remove: ['g'] }, error: 'x' });
  expect(again?.calls[0]).toBe(next?.calls[0]);
  expect(again).toMatchObject({ at: 3, gateway: [], error: 'x' });
});

test('a call object keeps its row object across updates (the table redraws only rows whose call changed)', () => {
  const a = call('a');
  const b = call('b');
  const before = rowsOf(event([a, b]));
  const after = rowsOf(event([a, call('b', { attempt: 2 })]));
  expect(after[0]).toBe(before[0]);
  expect(after[1]).not.toBe(before[1]);
});
