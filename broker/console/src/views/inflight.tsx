// In flight as a tool: sort by any column, counts by method / worker / state, pause, select and
// cancel in bulk (always confirmed, by id), the filter and sort kept in the link
// (`#/inflight?q=…&method=…&sort=…&group=…`).
import { useEffect, useLayoutEffect, useMemo, useState } from 'preact/hooks';
import { rpc } from '../api';
import { cancelCalls, describeReport } from '../bulk-cancel';
import { filterRows, formatSort, nextSort, parseSort, rowsOf, sortRows, type GroupBy, type Row, type Sort, type SortKey } from '../inflight-rows';
import { isStale, type Live } from '../live';
import { replaceQuery, useRoute, type Route } from '../route';
import type { InflightEvent } from '../types';
import { Empty, Filter, Header, Notice } from './common';
import { ConfirmBulkCancel, type BulkTarget } from './confirm-bulk-cancel';
import { ConfirmCancel, type CancelTarget } from './confirm-cancel';
import { InflightGroups } from './inflight-groups';
import { InflightTable } from './inflight-table';

/** What the link says about the view. */
interface ViewQuery {
  readonly text: string;
  readonly method: string | undefined;
  readonly sort: Sort;
  readonly group: GroupBy;
}

function queryOf(route: Route): ViewQuery {
  const group = route.query['group'];
  return {
    text: route.query['q'] ?? '',
    method: route.query['method'] || undefined,
    sort: parseSort(route.query['sort']),
    group: group === 'worker' || group === 'state' ? group : 'method',
  };
}

export function InflightView(props: { live: Live }) {
  const route = useRoute('inflight');
  const [query, setQuery] = useState<ViewQuery>(() => queryOf(route));
  // A pasted or followed link (a hash change) sets the view again; the view's own edits replace the link without one.
  useEffect(() => setQuery(queryOf(route)), [route]);
  const update = (change: Partial<ViewQuery>): void => {
    const next = { ...query, ...change };
    setQuery(next);
    replaceQuery(route, { q: next.text, method: next.method, sort: formatSort(next.sort), group: next.group === 'method' ? undefined : next.group });
  };

  // Paused: the picture of the moment stays (rows do not move under the pointer) until resumed.
  const [frozen, setFrozen] = useState<InflightEvent | undefined>();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [confirm, setConfirm] = useState<CancelTarget | undefined>();
  const [bulk, setBulk] = useState<BulkTarget | undefined>();
  const [message, setMessage] = useState<{ readonly key: string; readonly text: string } | undefined>();

  const live = props.live.inflight;
  const event = frozen ?? live;
  // Feed-to-DOM time of each update (a User Timing measure; bench/console-bench.ts reads them): the DOM is updated when this runs.
  useLayoutEffect(() => {
    if (live?.receivedAt === undefined || frozen) return;
    // A bounded record: the last 1,000 updates at most (the timeline keeps measures until cleared).
    if (performance.getEntriesByName('inflight-feed-to-dom').length >= 1000) performance.clearMeasures('inflight-feed-to-dom');
    performance.measure('inflight-feed-to-dom', { start: live.receivedAt, end: performance.now() });
  }, [live]);

  // Old news while the feed is down: rows dim, ages and deadlines say they stopped, actions are off.
  const stale = isStale(props.live);
  const all = useMemo(() => (event ? rowsOf(event) : []), [event]);
  const listed = useMemo(() => filterRows(all, { text: query.text, method: query.method }), [all, query.text, query.method]);
  const rows = useMemo(() => sortRows(listed, query.sort), [listed, query.sort]);
  const chosen = all.filter((r) => selected.has(r.callId));
  if (!event) return <><Header title="In flight" /><Empty>Waiting for the live feed…</Empty></>;

  const select = (ids: readonly string[], on: boolean): void => setSelected((s) => {
    const next = new Set(s);
    for (const id of ids) if (on) next.add(id); else next.delete(id);
    return next;
  });
  const pause = (): void => setFrozen(frozen ? undefined : live);
  // Cancels the id confirmed in the dialog: the dialog's own copy, whatever the rows did meanwhile.
  const cancelOne = async (callId: string): Promise<void> => {
    setConfirm(undefined);
    setMessage({ key: callId, text: 'cancelling…' });
    const answer = await rpc('inflight.cancel', { callId });
    setMessage({ key: callId, text: answer.ok ? `cancel: ${(answer.result as { outcome?: string } | null)?.outcome ?? 'sent'}` : `cancel failed: ${answer.error.message}` });
  };
  // Cancels exactly the ids the dialog listed.
  const cancelMany = async (callIds: readonly string[]): Promise<void> => {
    setBulk(undefined);
    select(callIds, false);
    setMessage({ key: `${callIds.length} calls`, text: 'cancelling…' });
    const report = await cancelCalls(callIds);
    setMessage({ key: `${callIds.length} calls`, text: describeReport(report) });
  };

  const n = rows.length;
  return (
    <>
      <Header
        title="In flight"
        sub={<>{n} call{n === 1 ? '' : 's'}{n !== all.length ? ` of ${all.length}` : ''} · {frozen ? 'paused at' : stale ? 'as of' : 'updated'} {new Date(event.at).toLocaleTimeString([], { hour12: false })}</>}
      >
        <Filter value={query.text} onInput={(text) => update({ text })} label="Filter calls" />
        <button type="button" onClick={pause} aria-pressed={frozen !== undefined} data-pause>{frozen ? 'Resume updates' : 'Pause updates'}</button>
      </Header>
      {frozen ? (
        <p class="notice paused" role="status" data-paused>
          <strong>Paused.</strong> The list is as it stood at {new Date(frozen.at).toLocaleTimeString([], { hour12: false })}; calls may have finished or started since. <button type="button" class="small" onClick={pause}>Resume</button>
        </p>
      ) : null}
      {!event.configured ? <Notice>No in-flight store is configured on this broker (REDIS_URL): only the calls it relays itself are shown.</Notice> : null}
      {event.error ? <Notice kind="error">{event.error}: showing the gateway's own calls only.</Notice> : null}
      {message ? <Notice><span class="mono" data-last-cancel={message.key}>{message.key}</span> {message.text}</Notice> : null}
      {all.length === 0 ? (
        <Empty>Nothing running. Calls appear here as workers take them, with their progress.</Empty>
      ) : (
        <>
          <InflightGroups rows={all} by={query.group} onBy={(group) => update({ group })} method={query.method} onMethod={(method) => update({ method })}
            onCancelMethod={(method) => setBulk({ what: `every ${method} call listed`, rows: all.filter((r) => r.method === method) })} stale={stale} />
          <div class="bulk-bar" data-selected={chosen.length}>
            <span>{chosen.length} selected</span>
            <button type="button" class="danger small" disabled={stale || chosen.length === 0} onClick={() => setBulk({ what: 'the selected calls', rows: chosen })}>Cancel selected</button>
            <button type="button" class="ghost small" disabled={selected.size === 0} onClick={() => setSelected(new Set())}>Clear selection</button>
            {query.method ? <button type="button" class="ghost small" onClick={() => update({ method: undefined })}>Method: {query.method} ✕</button> : null}
          </div>
          {n === 0 ? <Empty>No call matches the filter.</Empty> : (
            <InflightTable rows={rows} at={event.at} sort={query.sort} onSort={(key: SortKey) => update({ sort: nextSort(query.sort, key) })} selected={selected} onSelect={select} stale={stale}
              onCancel={(r: Row) => setConfirm({ callId: r.callId, method: r.method, worker: r.worker })} />
          )}
        </>
      )}
      {confirm ? <ConfirmCancel target={confirm} disabled={stale} onConfirm={(id) => void cancelOne(id)} onClose={() => setConfirm(undefined)} /> : null}
      {bulk ? <ConfirmBulkCancel target={bulk} disabled={stale} onConfirm={(ids) => void cancelMany(ids)} onClose={() => setBulk(undefined)} /> : null}
    </>
  );
}
