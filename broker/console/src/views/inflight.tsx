import { useLayoutEffect, useState } from 'preact/hooks';
import { rpc } from '../api';
import { duration, relative, shortId } from '../format';
import { isStale, type Live } from '../live';
import type { ClusterCall } from '../types';
import { Badge, Empty, Filter, Header, matches, Notice, ProgressBar } from './common';
import { ConfirmCancel, type CancelTarget } from './confirm-cancel';
import { useRowWindow } from '../window-rows';

type Row = ClusterCall & { readonly source: 'cluster' | 'gateway' };

export function InflightView(props: { live: Live }) {
  const [filter, setFilter] = useState('');
  const [messages, setMessages] = useState<Record<string, string>>({});
  const [confirm, setConfirm] = useState<CancelTarget | undefined>();
  const event = props.live.inflight;
  // Feed-to-DOM time of each update (a User Timing measure; bench/console-bench.ts reads them): the DOM is updated when this runs.
  useLayoutEffect(() => {
    if (event?.receivedAt === undefined) return;
    // A bounded record: the last 1,000 updates at most (the timeline keeps measures until cleared).
    if (performance.getEntriesByName('inflight-feed-to-dom').length >= 1000) performance.clearMeasures('inflight-feed-to-dom');
    performance.measure('inflight-feed-to-dom', { start: event.receivedAt, end: performance.now() });
  }, [event]);
  // Old news while the feed is down: rows dim, ages and deadlines say they stopped, Cancel is off.
  const stale = isStale(props.live);
  const rows = event ? rowsOf(event, filter) : [];
  // Only the rows in view are rendered (hooks run on every render, so before any early return).
  const win = useRowWindow(rows.length);
  if (!event) return <><Header title="In flight" /><Empty>Waiting for the live feed…</Empty></>;

  // Cancels the id confirmed in the dialog: the dialog's own copy, whatever the rows did meanwhile.
  const cancel = async (callId: string): Promise<void> => {
    setConfirm(undefined);
    setMessages((m) => ({ ...m, [callId]: 'cancelling…' }));
    const answer = await rpc('inflight.cancel', { callId });
    const text = answer.ok ? `cancel: ${(answer.result as { outcome?: string } | null)?.outcome ?? 'sent'}` : `cancel failed: ${answer.error.message}`;
    setMessages((m) => ({ ...m, [callId]: text }));
  };
  const lastCancel = Object.entries(messages).at(-1);

  return (
    <>
      <Header title="In flight" sub={<>{rows.length} call{rows.length === 1 ? '' : 's'} · {stale ? 'as of' : 'updated'} {new Date(event.at).toLocaleTimeString([], { hour12: false })}</>}>
        <Filter value={filter} onInput={setFilter} label="Filter calls" />
      </Header>
      {!event.configured ? <Notice>No in-flight store is configured on this broker (REDIS_URL): only the calls it relays itself are shown.</Notice> : null}
      {event.error ? <Notice kind="error">{event.error}: showing the gateway's own calls only.</Notice> : null}
      {lastCancel ? <Notice><span class="mono" data-last-cancel={lastCancel[0]}>{lastCancel[0]}</span> {lastCancel[1]}</Notice> : null}
      {rows.length === 0 ? (
        <Empty>Nothing running. Calls appear here as workers take them, with their progress.</Empty>
      ) : (
        <div class="table-wrap">
          <table class={`grid inflight${stale ? ' stale' : ''}`} aria-label="Calls in flight" aria-rowcount={rows.length + 1} data-rows={rows.length} data-stale={stale ? 'true' : undefined}>
            <colgroup>
              <col class="w-id" /><col /><col class="w-service col-service" /><col class="w-worker col-worker" /><col class="w-attempt col-attempt" /><col class="w-age" /><col class="w-deadline" /><col class="w-progress" /><col class="w-actions" />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">Call id</th>
                <th scope="col">Method</th>
                <th scope="col" class="col-service">Service</th>
                <th scope="col" class="col-worker">Worker</th>
                <th scope="col" class="num col-attempt">Attempt</th>
                <th scope="col" class="num">Age</th>
                <th scope="col" class="num">Deadline</th>
                <th scope="col" class="wide">Progress</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody ref={win.body}>
              {win.above > 0 ? <tr aria-hidden="true" class="spacer" style={{ height: `${win.above}px` }} /> : null}
              {rows.slice(win.start, win.end).map((r, i) => (
                <tr key={r.callId} data-call-id={r.callId} aria-rowindex={win.start + i + 2}>
                  <td class="mono" title={r.callId}>{shortId(r.callId)}</td>
                  <td class="strong">
                    {r.method}
                    {/* Service and worker under the method when the page is too narrow for their columns. */}
                    <span class="narrow-only muted small-text">{[r.service, r.worker ?? r.state].filter(Boolean).join(' · ')}</span>
                  </td>
                  <td class="col-service">{r.service || <span class="muted">–</span>}</td>
                  <td class="mono col-worker">{r.worker || <span class="muted">{r.state ?? '–'}</span>}</td>
                  <td class="num col-attempt">
                    {/* In a span of its own, so the badge after it is not a first child (which loses its margin). */}
                    <span>{r.attempt ?? '–'}</span>
                    {r.state === 'retrying' ? <Badge kind="retrying">retry {r.nextTryAt && !stale ? relative(r.nextTryAt - event.at) : ''}</Badge> : null}
                  </td>
                  <td class="num" title={stale ? 'Not counting: the feed is down' : undefined}>{r.startedAt ? `${stale ? '≥ ' : ''}${duration(event.at - r.startedAt)}` : '–'}</td>
                  <td class="num" title={stale ? 'Not counting: the feed is down' : undefined}>{r.deadline ? (stale ? '?' : relative(r.deadline - event.at)) : '–'}</td>
                  <td class="wide">
                    <ProgressBar fraction={r.progress?.fraction} message={r.progress?.message} label={`Progress of ${r.method} ${r.callId}`} />
                  </td>
                  <td class="actions-cell">
                    {r.cancelRequested ? <Badge kind="cancelled">cancel asked</Badge> : null}
                    <button type="button" class="danger small" disabled={stale} onClick={() => setConfirm({ callId: r.callId, method: r.method, worker: r.worker })} aria-label={`Cancel ${r.method} ${r.callId}`}>Cancel</button>
                  </td>
                </tr>
              ))}
              {win.below > 0 ? <tr aria-hidden="true" class="spacer" style={{ height: `${win.below}px` }} /> : null}
            </tbody>
          </table>
        </div>
      )}
      {confirm ? <ConfirmCancel target={confirm} disabled={stale} onConfirm={(id) => void cancel(id)} onClose={() => setConfirm(undefined)} /> : null}
    </>
  );
}

/** The cluster's calls, then the gateway's calls no worker has taken yet (or untracked ones) as "relaying"; filtered. */
function rowsOf(event: NonNullable<Live['inflight']>, filter: string): Row[] {
  const cluster = new Set(event.calls.map((c) => c.callId));
  return ([
    ...event.calls.map((c): Row => ({ ...c, source: 'cluster' })),
    ...event.gateway.filter((g) => !cluster.has(g.callId) && !g.callId.startsWith('notification.')).map((g): Row => ({ callId: g.callId, method: g.method, startedAt: g.startedAt, state: `relaying (${g.via})`, source: 'gateway' })),
  ] as Row[]).filter((r) => matches(filter, r.callId, r.method, r.service, r.worker));
}
