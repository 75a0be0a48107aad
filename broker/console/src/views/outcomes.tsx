import { useState } from 'preact/hooks';
import { clock, duration, shortId } from '../format';
import type { Live } from '../live';
import type { OutcomeState } from '../types';
import { Badge, Empty, Filter, Header, matches } from './common';

const states: readonly OutcomeState[] = ['done', 'failed', 'cancelled', 'expired'];

export function OutcomesView(props: { live: Live }) {
  const [filter, setFilter] = useState('');
  const [only, setOnly] = useState<OutcomeState | 'all'>('all');
  const all = props.live.outcomes;
  const counts = Object.fromEntries(states.map((s) => [s, all.filter((o) => o.state === s).length])) as Record<OutcomeState, number>;
  const rows = all.filter((o) => (only === 'all' || o.state === only) && matches(filter, o.callId, o.method, o.service, o.worker)).reverse();
  return (
    <>
      <Header title="Recent outcomes" sub="Calls relayed by this broker (exact), and tracked calls the live watcher saw finish anywhere in the cluster.">
        <Filter value={filter} onInput={setFilter} label="Filter outcomes" />
      </Header>
      <div class="segmented" role="group" aria-label="Show outcomes">
        <button type="button" aria-pressed={only === 'all'} onClick={() => setOnly('all')}>All <span class="count">{all.length}</span></button>
        {states.map((s) => (
          <button type="button" key={s} aria-pressed={only === s} onClick={() => setOnly(s)} class={`seg-${s}`}>
            {s} <span class="count">{counts[s]}</span>
          </button>
        ))}
      </div>
      {rows.length === 0 ? (
        <Empty>No finished calls yet{only === 'all' ? '' : ` in state ${only}`}.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="grid" aria-label="Recent outcomes">
            <thead>
              <tr>
                <th scope="col">Ended</th>
                <th scope="col">Outcome</th>
                <th scope="col">Method</th>
                <th scope="col">Service</th>
                <th scope="col">Worker</th>
                <th scope="col" class="num">Attempt</th>
                <th scope="col" class="num">Duration</th>
                <th scope="col">Call id</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((o) => (
                <tr key={o.callId} data-call-id={o.callId}>
                  <td class="mono">{clock(o.endedAt)}</td>
                  <td>
                    <Badge kind={o.state}>{o.state}</Badge>
                    {o.code !== undefined ? <span class="muted code"> {o.code}</span> : null}
                  </td>
                  <td class="strong">{o.method}</td>
                  <td>{o.service ?? <span class="muted">–</span>}</td>
                  <td class="mono">{o.worker ?? <span class="muted">{o.seenBy === 'gateway' ? 'via gateway' : '–'}</span>}</td>
                  <td class="num">{o.attempt ?? '–'}</td>
                  <td class="num">{duration(o.durationMs)}</td>
                  <td class="mono" title={o.callId}>{shortId(o.callId)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
