import { useEffect, useState } from 'preact/hooks';
import { rpc, type RpcError } from '../api';
import { bytes, clock, json, shortId } from '../format';
import { useServices } from '../hooks';
import type { Live } from '../live';
import type { DeadLetter } from '../types';
import { Empty, Header, Notice } from './common';

const pageSize = 50;

type Listing = { state: 'loading' } | { state: 'ok'; total: number; items: DeadLetter[] } | { state: 'error'; error: RpcError };

export function DeadLettersView(props: { live: Live }) {
  const services = useServices(props.live.catalogueVersion, 30_000);
  const [service, setService] = useState('');
  const [offset, setOffset] = useState(0);
  const [listing, setListing] = useState<Listing>({ state: 'loading' });
  const [shown, setShown] = useState<(DeadLetter & { request: unknown }) | undefined>();
  const [message, setMessage] = useState<{ kind: 'info' | 'error'; text: string } | undefined>();
  const [confirmPurge, setConfirmPurge] = useState(false);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let live = true;
    void rpc('dlq.list', { ...(service === '' ? {} : { service }), offset, limit: pageSize }).then((a) => {
      if (!live) return;
      setListing(a.ok ? { state: 'ok', ...(a.result as { total: number; items: DeadLetter[] }) } : { state: 'error', error: a.error });
    });
    return () => {
      live = false;
    };
  }, [service, offset, reload]);

  const act = async (label: string, method: string, params: Record<string, unknown>, count: string): Promise<void> => {
    setMessage({ kind: 'info', text: `${label}…` });
    const a = await rpc(method, params, 60_000);
    if (a.ok) {
      const n = (a.result as Record<string, number>)[count];
      setMessage({ kind: 'info', text: `${label}: ${n ?? 0} message${n === 1 ? '' : 's'}` });
    } else setMessage({ kind: 'error', text: `${label} failed: ${a.error.message} (${a.error.code})` });
    setShown(undefined);
    setReload((r) => r + 1);
  };

  const inspect = async (d: DeadLetter): Promise<void> => {
    const a = await rpc('dlq.show', { service: d.service, id: d.id });
    if (a.ok) setShown(a.result as DeadLetter & { request: unknown });
    else setMessage({ kind: 'error', text: `dlq.show failed: ${a.error.message}` });
  };

  const names = services.state === 'ok' ? services.value.services.map((s) => s.name).filter((n) => n !== 'warren-broker') : [];
  const notServed = listing.state === 'error' && listing.error.code === -32601;
  return (
    <>
      <Header title="Dead letters" sub="Calls that failed every attempt, kept in each service's dead-letter queue.">
        <label class="inline">
          <span>Service</span>
          <select value={service} onChange={(e) => { setService((e.target as HTMLSelectElement).value); setOffset(0); setConfirmPurge(false); }}>
            <option value="">all services</option>
            {names.map((n) => <option key={n} value={n}>{n}</option>)}
          </select>
        </label>
        <button type="button" onClick={() => setReload((r) => r + 1)}>Refresh</button>
        <button type="button" disabled={service === '' || notServed} title={service === '' ? 'Pick a service first' : undefined} onClick={() => void act('Replay all', 'dlq.replay', { service, all: true }, 'replayed')}>Replay all</button>
        {confirmPurge ? (
          <button type="button" class="danger" onClick={() => { setConfirmPurge(false); void act('Purge', 'dlq.purge', { service }, 'purged'); }}>Confirm purge of {service}</button>
        ) : (
          <button type="button" class="danger" disabled={service === '' || notServed} title={service === '' ? 'Pick a service first' : undefined} onClick={() => setConfirmPurge(true)}>Purge…</button>
        )}
      </Header>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      {listing.state === 'loading' ? <Empty>Loading…</Empty> : null}
      {listing.state === 'error' ? (
        <Notice kind="error">{notServed ? 'This broker does not serve the dead-letter methods (dlq.list: method not found).' : `dlq.list failed: ${listing.error.message} (${listing.error.code})`}</Notice>
      ) : null}
      {listing.state === 'ok' && listing.items.length === 0 ? <Empty>No dead letters{service === '' ? '' : ` for ${service}`}.</Empty> : null}
      {listing.state === 'ok' && listing.items.length > 0 ? (
        <>
          <div class="table-wrap">
            <table class="grid" aria-label="Dead letters">
              <thead>
                <tr>
                  <th scope="col">Dead-lettered</th>
                  <th scope="col">Service</th>
                  <th scope="col">Method</th>
                  <th scope="col">Reason</th>
                  <th scope="col" class="num">Attempts</th>
                  <th scope="col" class="num">Params</th>
                  <th scope="col">Call id</th>
                  <th scope="col"><span class="sr-only">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {listing.items.map((d) => (
                  <tr key={`${d.service}/${d.id}`} data-dead-letter={d.id}>
                    <td class="mono">{clock(d.deadLetteredAt)}</td>
                    <td>{d.service}</td>
                    <td class="strong">{d.method}</td>
                    <td>{d.reason}{d.code !== undefined ? <span class="muted code"> {d.code}</span> : null}</td>
                    <td class="num">{d.attempts}</td>
                    <td class="num">{bytes(d.paramsBytes)}</td>
                    <td class="mono" title={d.callId}>{shortId(d.callId)}</td>
                    <td class="actions-cell">
                      <button type="button" class="small" onClick={() => void inspect(d)} aria-label={`Inspect ${d.method} ${d.id}`}>Inspect</button>
                      <button type="button" class="small" onClick={() => void act('Replay', 'dlq.replay', { service: d.service, id: d.id }, 'replayed')} aria-label={`Replay ${d.method} ${d.id}`}>Replay</button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <span class="muted">{offset + 1}–{offset + listing.items.length} of {listing.total}</span>
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - pageSize))}>Newer</button>
            <button type="button" disabled={offset + listing.items.length >= listing.total} onClick={() => setOffset(offset + pageSize)}>Older</button>
          </div>
        </>
      ) : null}
      {shown ? (
        <section class="card" aria-label="Dead letter">
          <header class="card-head">
            <h2>{shown.method} <span class="muted mono">{shown.id}</span></h2>
            <button type="button" onClick={() => setShown(undefined)}>Close</button>
          </header>
          <pre class="code-block">{json(shown)}</pre>
        </section>
      ) : null}
    </>
  );
}
