import { useState } from 'preact/hooks';
import { rpc } from '../api';
import { duration, relative, shortId } from '../format';
import type { Live } from '../main';
import type { ClusterCall } from '../types';
import { Badge, Empty, Filter, Header, matches, Notice, ProgressBar } from './common';

type Row = ClusterCall & { readonly source: 'cluster' | 'gateway' };

export function InflightView(props: { live: Live }) {
  const [filter, setFilter] = useState('');
  const [messages, setMessages] = useState<Record<string, string>>({});
  const event = props.live.inflight;
  if (!event) return <><Header title="In flight" /><Empty>Waiting for the live feed…</Empty></>;
  const cluster = new Set(event.calls.map((c) => c.callId));
  // The gateway's calls no worker has taken yet (or untracked ones) show too, as "relaying".
  const rows = ([
    ...event.calls.map((c): Row => ({ ...c, source: 'cluster' })),
    ...event.gateway.filter((g) => !cluster.has(g.callId) && !g.callId.startsWith('notification.')).map((g): Row => ({ callId: g.callId, method: g.method, startedAt: g.startedAt, state: `relaying (${g.via})`, source: 'gateway' })),
  ] as Row[]).filter((r) => matches(filter, r.callId, r.method, r.service, r.worker));

  const cancel = async (row: Row): Promise<void> => {
    setMessages((m) => ({ ...m, [row.callId]: 'cancelling…' }));
    const answer = await rpc('inflight.cancel', { callId: row.callId });
    const text = answer.ok ? `cancel: ${(answer.result as { outcome?: string } | null)?.outcome ?? 'sent'}` : `cancel failed: ${answer.error.message}`;
    setMessages((m) => ({ ...m, [row.callId]: text }));
  };

  return (
    <>
      <Header title="In flight" sub={<>{rows.length} call{rows.length === 1 ? '' : 's'} · updated {new Date(event.at).toLocaleTimeString([], { hour12: false })}</>}>
        <Filter value={filter} onInput={setFilter} label="Filter calls" />
      </Header>
      {!event.configured ? <Notice>No in-flight store is configured on this broker (REDIS_URL): only the calls it relays itself are shown.</Notice> : null}
      {event.error ? <Notice kind="error">{event.error}: showing the gateway's own calls only.</Notice> : null}
      {rows.length === 0 ? (
        <Empty>Nothing running. Calls appear here as workers take them, with their progress.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="grid" aria-label="Calls in flight">
            <thead>
              <tr>
                <th scope="col">Call id</th>
                <th scope="col">Method</th>
                <th scope="col">Service</th>
                <th scope="col">Worker</th>
                <th scope="col" class="num">Attempt</th>
                <th scope="col" class="num">Age</th>
                <th scope="col" class="num">Deadline</th>
                <th scope="col" class="wide">Progress</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.callId} data-call-id={r.callId}>
                  <td class="mono" title={r.callId}>{shortId(r.callId)}</td>
                  <td class="strong">{r.method}</td>
                  <td>{r.service || <span class="muted">–</span>}</td>
                  <td class="mono">{r.worker || <span class="muted">{r.state ?? '–'}</span>}</td>
                  <td class="num">
                    {/* In a span of its own, so the badge after it is not a first child (which loses its margin). */}
                    <span>{r.attempt ?? '–'}</span>
                    {r.state === 'retrying' ? <Badge kind="retrying">retry {r.nextTryAt ? relative(r.nextTryAt - event.at) : ''}</Badge> : null}
                  </td>
                  <td class="num">{r.startedAt ? duration(event.at - r.startedAt) : '–'}</td>
                  <td class="num">{r.deadline ? relative(r.deadline - event.at) : '–'}</td>
                  <td class="wide">
                    <ProgressBar fraction={r.progress?.fraction} message={r.progress?.message} label={`Progress of ${r.method} ${r.callId}`} />
                  </td>
                  <td class="actions-cell">
                    {r.cancelRequested ? <Badge kind="cancelled">cancel asked</Badge> : null}
                    <button type="button" class="danger small" onClick={() => void cancel(r)} aria-label={`Cancel ${r.method} ${r.callId}`}>Cancel</button>
                    {messages[r.callId] ? <span class="muted small-text" role="status">{messages[r.callId]}</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
