// Dead letters: triage of what each service gave up (dlq.*). Filters (service, reason, method) live
// in the link (#/dead-letters?service=jobs&reason=retries_exhausted); one letter opens at
// #/dead-letters/<service>/<id>; several are replayed at once, after a confirmation, each new call
// id linked to its detail.
import { useEffect, useState } from 'preact/hooks';
import { rpc, type RpcError } from '../api';
import { bytes, dateTime, shortId } from '../format';
import { useServices } from '../hooks';
import type { Live } from '../live';
import { callHref, href, useRoute } from '../route';
import type { DeadLetter } from '../types';
import { DeadLetterPanel, ReplayedList, type Replayed } from './dead-letter-detail';
import { Empty, Header, Notice } from './common';

const pageSize = 50;
/** One browse reads this many at most; filters and pages apply to them here. */
const fetchLimit = 1000;

type Listing = { state: 'loading' } | { state: 'ok'; total: number; items: DeadLetter[] } | { state: 'error'; error: RpcError };

const keyOf = (d: Pick<DeadLetter, 'service' | 'id'>): string => `${d.service}/${d.id}`;

export function DeadLettersView(props: { live: Live }) {
  const route = useRoute();
  const services = useServices(props.live.catalogueVersion, 30_000);
  const service = route.query['service'] ?? '';
  const reason = route.query['reason'] ?? '';
  const method = route.query['method'];
  const [offset, setOffset] = useState(0);
  const [listing, setListing] = useState<Listing>({ state: 'loading' });
  const [message, setMessage] = useState<{ kind: 'info' | 'error'; text: string } | undefined>();
  const [replayed, setReplayed] = useState<readonly Replayed[]>([]);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [confirm, setConfirm] = useState<'purge' | 'replay' | 'replay-shown' | undefined>(undefined);
  const [reload, setReload] = useState(0);
  const filter = (q: Record<string, string | undefined>): void => {
    // Filters are written into the link (shareable); the view follows the link.
    location.hash = href(route.view, [], { service, reason, method, ...q });
    setOffset(0);
    setSelected(new Set());
    setConfirm(undefined);
  };

  useEffect(() => {
    let live = true;
    void rpc('dlq.list', { ...(service === '' ? {} : { service }), limit: fetchLimit }).then((a) => {
      if (!live) return;
      setListing(a.ok ? { state: 'ok', ...(a.result as { total: number; items: DeadLetter[] }) } : { state: 'error', error: a.error });
    });
    return () => {
      live = false;
    };
  }, [service, reload]);

  const done = (label: string, replays: readonly Replayed[], n: number): void => {
    setMessage({ kind: 'info', text: `${label}: ${n} message${n === 1 ? '' : 's'}` });
    setReplayed(replays);
    setSelected(new Set());
    setReload((r) => r + 1);
  };

  const act = async (label: string, method_: string, params: Record<string, unknown>, count: string): Promise<void> => {
    setMessage({ kind: 'info', text: `${label}…` });
    const a = await rpc(method_, params, 60_000);
    if (!a.ok) {
      setMessage({ kind: 'error', text: `${label} failed: ${a.error.message} (${a.error.code})` });
      return;
    }
    const r = a.result as Record<string, unknown>;
    const replays = Array.isArray(r['replays']) ? (r['replays'] as Replayed[]).map((x) => ({ ...x, service: params['service'] as string })) : [];
    done(label, replays, typeof r[count] === 'number' ? r[count] : 0);
  };

  /**
   * Replays exactly these letters (the selection, or every row the filters show), by id, one
   * dlq.replay per service: never the whole queue, so a filter that shows one row replays one.
   */
  const replayLetters = async (label: string, letters: readonly DeadLetter[]): Promise<void> => {
    setConfirm(undefined);
    const byService = new Map<string, string[]>();
    for (const d of letters) byService.set(d.service, [...(byService.get(d.service) ?? []), d.id]);
    const replays: Replayed[] = [];
    for (const [name, ids] of byService) {
      const a = await rpc('dlq.replay', { service: name, ids }, 60_000);
      if (!a.ok) {
        setMessage({ kind: 'error', text: `Replay of ${name} failed: ${a.error.message} (${a.error.code})` });
        setReload((r) => r + 1);
        return;
      }
      replays.push(...(a.result as { replays: Replayed[] }).replays.map((x) => ({ ...x, service: name })));
    }
    done(label, replays, replays.length);
  };

  const names = services.state === 'ok' ? services.value.services.map((s) => s.name).filter((n) => n !== 'warren-broker') : [];
  const notServed = listing.state === 'error' && listing.error.code === -32601;
  const all = listing.state === 'ok' ? listing.items : [];
  const shown = all.filter((d) => (reason === '' || d.reason === reason) && (method === undefined || d.method === method));
  const page = shown.slice(offset, offset + pageSize);
  const filtered = reason !== '' || method !== undefined;
  const selectedLetters = all.filter((d) => selected.has(keyOf(d)));
  const reasons = [...new Set(all.map((d) => d.reason))].sort();
  const methods = [...new Set(all.map((d) => d.method))].sort();
  const pageSelected = page.length > 0 && page.every((d) => selected.has(keyOf(d)));
  const toggle = (k: string): void => setSelected((s) => {
    const next = new Set(s);
    if (next.has(k)) next.delete(k);
    else next.add(k);
    return next;
  });
  const [openService, openId] = route.path;
  const back = href(route.view, [], route.query);
  return (
    <>
      <Header title="Dead letters" sub="Calls that failed every attempt, kept in each service's dead-letter queue.">
        <label class="inline">
          <span>Service</span>
          <select value={service} onChange={(e) => filter({ service: (e.target as HTMLSelectElement).value, reason: undefined, method: undefined })}>
            <option value="">all services</option>
            {names.map((n) => <option key={n} value={n}>{n}</option>)}
          </select>
        </label>
        <label class="inline">
          <span>Reason</span>
          <select value={reason} onChange={(e) => filter({ reason: (e.target as HTMLSelectElement).value })}>
            <option value="">any reason</option>
            {[...new Set([...reasons, ...(reason === '' ? [] : [reason])])].map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </label>
        <label class="inline">
          <span>Method</span>
          <select value={method ?? '\u0000'} onChange={(e) => { const v = (e.target as HTMLSelectElement).value; filter({ method: v === '\u0000' ? undefined : v }); }}>
            <option value={'\u0000'}>any method</option>
            {[...new Set([...methods, ...(method === undefined ? [] : [method])])].map((m) => <option key={m} value={m}>{m === '' ? '(unreadable body)' : m}</option>)}
          </select>
        </label>
        <button type="button" onClick={() => setReload((r) => r + 1)}>Refresh</button>
        <button type="button" disabled={selected.size === 0} onClick={() => setConfirm('replay')} data-replay-selected>Replay selected ({selected.size})…</button>
        <button type="button" disabled={shown.length === 0 || notServed} onClick={() => setConfirm('replay-shown')} data-replay-shown={shown.length}>{filtered ? 'Replay shown' : 'Replay all'} ({shown.length})…</button>
        {confirm === 'purge' ? (
          <button type="button" class="danger" onClick={() => { setConfirm(undefined); void act('Purge', 'dlq.purge', { service }, 'purged'); }}>Confirm purge of {service}</button>
        ) : (
          <button type="button" class="danger" disabled={service === '' || notServed} title={service === '' ? 'Pick a service first' : undefined} onClick={() => setConfirm('purge')}>Purge…</button>
        )}
      </Header>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <ReplayedList replays={replayed} />
      {openService !== undefined && openId !== undefined ? <DeadLetterPanel service={openService} id={openId} back={back} onReplayed={(r) => { done('Replay', r, r.length); location.hash = back; }} /> : null}
      {listing.state === 'loading' ? <Empty>Loading…</Empty> : null}
      {listing.state === 'error' ? (
        <Notice kind="error">{notServed ? 'This broker does not serve the dead-letter methods (dlq.list: method not found).' : `dlq.list failed: ${listing.error.message} (${listing.error.code})`}</Notice>
      ) : null}
      {listing.state === 'ok' && shown.length === 0 ? <Empty>No dead letters{service === '' ? '' : ` for ${service}`}{reason !== '' || method !== undefined ? ' matching the filters' : ''}.</Empty> : null}
      {page.length > 0 ? (
        <>
          <div class="table-wrap">
            <table class="grid" aria-label="Dead letters">
              <thead>
                <tr>
                  <th scope="col"><input type="checkbox" aria-label="Select every dead letter on this page" checked={pageSelected} onChange={() => setSelected((s) => {
                    const next = new Set(s);
                    for (const d of page) if (pageSelected) next.delete(keyOf(d)); else next.add(keyOf(d));
                    return next;
                  })} /></th>
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
                {page.map((d) => (
                  <tr key={keyOf(d)} data-dead-letter={d.id} aria-selected={selected.has(keyOf(d))}>
                    <td><input type="checkbox" aria-label={`Select ${d.method} ${d.id}`} checked={selected.has(keyOf(d))} onChange={() => toggle(keyOf(d))} /></td>
                    <td class="mono nowrap">{dateTime(d.deadLetteredAt)}</td>
                    <td>{d.service}</td>
                    <td class="strong">{d.method}</td>
                    <td>{d.reason}{d.code !== undefined ? <span class="muted code"> {d.code}</span> : null}</td>
                    <td class="num">{d.attempts}</td>
                    <td class="num">{bytes(d.paramsBytes)}</td>
                    <td class="mono" title={d.callId}>{d.callId === '' ? '–' : <a href={callHref(d.callId)}>{shortId(d.callId)}</a>}</td>
                    <td class="actions-cell">
                      <button type="button" class="small" onClick={() => (location.hash = href(route.view, [d.service, d.id], route.query))} aria-label={`Inspect ${d.method} ${d.id}`}>Inspect</button>
                      <button type="button" class="small" onClick={() => void act('Replay', 'dlq.replay', { service: d.service, id: d.id }, 'replayed')} aria-label={`Replay ${d.method} ${d.id}`}>Replay</button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <span class="muted">{offset + 1}–{offset + page.length} of {shown.length}{listing.state === 'ok' && listing.total > all.length ? ` (the newest ${all.length} of ${listing.total} read)` : ''}</span>
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - pageSize))}>Newer</button>
            <button type="button" disabled={offset + page.length >= shown.length} onClick={() => setOffset(offset + pageSize)}>Older</button>
          </div>
        </>
      ) : null}
      {confirm === 'replay' ? <ConfirmReplay letters={selectedLetters} onConfirm={() => void replayLetters('Replay selected', selectedLetters)} onClose={() => setConfirm(undefined)} /> : null}
      {confirm === 'replay-shown' ? (
        <ConfirmReplay letters={shown} {...(listing.state === 'ok' && listing.total > all.length ? { unlisted: listing.total - all.length } : {})} onConfirm={() => void replayLetters(filtered ? 'Replay shown' : 'Replay all', shown)} onClose={() => setConfirm(undefined)} />
      ) : null}
    </>
  );
}

/** How many letters the confirmation names one by one. */
const sampleSize = 5;

/** Replaying sends the calls again, to workers that may act on them: asked first, with the count and a sample of what goes. */
function ConfirmReplay(props: { letters: readonly DeadLetter[]; unlisted?: number; onConfirm: () => void; onClose: () => void }) {
  const count = props.letters.length;
  const services = [...new Set(props.letters.map((d) => d.service))];
  const sample = props.letters.slice(0, sampleSize);
  return (
    <div class="overlay" onClick={props.onClose} onKeyDown={(e) => e.key === 'Escape' && props.onClose()}>
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="replay-title" onClick={(e) => e.stopPropagation()} data-confirm-replay={count}>
        <h2 id="replay-title">Replay {count} dead letter{count === 1 ? '' : 's'}?</h2>
        <ul class="sample" aria-label="Dead letters to replay">
          {sample.map((d) => <li key={keyOf(d)}><span class="strong">{d.method === '' ? '(unreadable body)' : d.method}</span> <span class="muted">{d.service} · {d.reason} · {d.id}</span></li>)}
          {count > sample.length ? <li class="muted">and {count - sample.length} more</li> : null}
        </ul>
        <p class="help">Each goes back to {services.join(', ')} as a new call with a new id and deadline; nobody waits for its answer, which the in-flight store keeps under the new id. {count === 1 ? 'Only this one goes' : `Only these ${count} go`}{props.unlisted === undefined ? '' : `; ${props.unlisted} more in the queue, not loaded here, stay`}.</p>
        <div class="send-row">
          <button type="button" autoFocus onClick={props.onClose}>Keep them</button>
          <button type="button" onClick={props.onConfirm}>Replay {count}</button>
        </div>
      </div>
    </div>
  );
}
