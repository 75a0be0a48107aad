// Outcomes: finished calls from the broker's outcome history in Redis (history.list: successes, and
// failures kept longer), filtered by method, code, worker, state and time, the filters written into
// the link (#/outcomes?method=…&code=…). A broker without Redis has no history: the view then shows
// the live feed's recent outcomes, as before.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { rpc, type RpcError } from '../api';
import { dateTime, duration, fromLocalInput, parseTimeParam, shortId, toLocalInput } from '../format';
import type { Live } from '../live';
import { callHref, replaceQuery, type Route } from '../route';
import type { HistoryItem, HistoryPage, OutcomeState } from '../types';
import { Badge, Empty, Header, Notice } from './common';

const states = ['all', 'done', 'failures', 'failed', 'cancelled', 'expired'] as const;
type StateFilter = (typeof states)[number];
/** The filters the link holds. */
const filterKeys = ['method', 'code', 'worker', 'state', 'since', 'until'] as const;
type Filters = Partial<Record<(typeof filterKeys)[number], string>>;

/** At most one reload per this long while new outcomes stream in. */
const refreshMs = 2000;
const typingPauseMs = 250;

/** history.list's params for the filters; `problem` names a filter that does not read. */
function toParams(f: Filters, before: string | undefined): { params: Record<string, unknown>; problem?: string } {
  const params: Record<string, unknown> = { limit: 100 };
  if (f.method?.trim()) params['method'] = f.method.trim();
  if (f.worker?.trim()) params['worker'] = f.worker.trim();
  if (f.state && f.state !== 'all') params['state'] = f.state;
  if (f.code?.trim()) {
    const code = Number(f.code.trim());
    if (!Number.isSafeInteger(code)) return { params, problem: 'The code must be a whole number, e.g. -32001.' };
    params['code'] = code;
  }
  for (const key of ['since', 'until'] as const) {
    const text = f[key];
    if (text === undefined || text === '') continue;
    const at = parseTimeParam(text);
    if (at === undefined) return { params, problem: `"${text}" is not a time: give a date (2026-12-04) or a date and time (2026-12-04T09:30).` };
    params[key] = at;
  }
  if (before !== undefined) params['before'] = before;
  return { params };
}

type Loaded = { readonly state: 'loading' } | { readonly state: 'ok'; readonly page: HistoryPage } | { readonly state: 'no-history' } | { readonly state: 'error'; readonly error: RpcError };

export function OutcomesView(props: { live: Live; route: Route }) {
  const filters: Filters = useMemo(() => Object.fromEntries(filterKeys.flatMap((k) => (props.route.query[k] ? [[k, props.route.query[k]]] : []))), [props.route.query]);
  const [draft, setDraft] = useState<Filters>(filters);
  // A link pasted or followed while the view is open (a hash change) replaces the filters.
  useEffect(() => setDraft(filters), [filters]);
  const [pages, setPages] = useState<string[]>([]);
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  const before = pages[pages.length - 1];
  const { params, problem } = toParams(draft, before);
  const key = JSON.stringify(params);

  // New outcomes on the feed: reload the newest page, at most every refreshMs.
  const newest = props.live.outcomes.length === 0 ? '' : props.live.outcomes[props.live.outcomes.length - 1]?.callId;
  useEffect(() => {
    if (before !== undefined) return undefined;
    const timer = setTimeout(() => setTick((t) => t + 1), refreshMs);
    return () => clearTimeout(timer);
  }, [newest, before]);

  // Filters apply as they are typed: one query once typing pauses.
  useEffect(() => {
    if (problem !== undefined) return undefined;
    let live = true;
    const timer = setTimeout(() => {
      rpc('history.list', params).then((answer) => {
        if (!live) return;
        if (answer.ok) setLoaded({ state: 'ok', page: answer.result as HistoryPage });
        else setLoaded(answer.error.code === -32601 ? { state: 'no-history' } : { state: 'error', error: answer.error });
      }, (err: unknown) => live && setLoaded({ state: 'error', error: { code: 0, message: err instanceof Error ? err.message : String(err) } }));
    }, typingPauseMs);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key, tick]);

  const set = (k: keyof Filters, v: string): void => {
    const next = { ...draft, [k]: v === '' ? undefined : v };
    setDraft(next);
    setPages([]);
    replaceQuery(props.route, Object.fromEntries(filterKeys.map((f) => [f, next[f]])));
  };

  return (
    <>
      <Header title="Outcomes" sub="Finished calls anywhere in the cluster, from the outcome history in Redis (in memory when embedded): the last successes, and failures kept longer (24 h). It survives a broker restart.">
        <button type="button" class="ghost" onClick={() => { setDraft({}); setPages([]); replaceQuery(props.route, Object.fromEntries(filterKeys.map((f) => [f, undefined]))); }}>Clear filters</button>
      </Header>
      <form class="filters" aria-label="Filter outcomes" onSubmit={(e) => e.preventDefault()}>
        <label>Method <input type="search" name="method" data-filter value={draft.method ?? ''} onInput={(e) => set('method', (e.target as HTMLInputElement).value)} /></label>
        <label>Code <input type="text" inputMode="numeric" name="code" size={7} value={draft.code ?? ''} onInput={(e) => set('code', (e.target as HTMLInputElement).value)} /></label>
        <label>Worker <input type="search" name="worker" value={draft.worker ?? ''} onInput={(e) => set('worker', (e.target as HTMLInputElement).value)} /></label>
        <label>Outcome
          <select name="state" value={draft.state ?? 'all'} onChange={(e) => set('state', (e.target as HTMLSelectElement).value === 'all' ? '' : (e.target as HTMLSelectElement).value)}>
            {states.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <label>From <input type="datetime-local" name="since" value={toLocalInput(draft.since ? parseTimeParam(draft.since) : undefined)} onChange={(e) => set('since', String(fromLocalInput((e.target as HTMLInputElement).value) ?? ''))} /></label>
        <label>To <input type="datetime-local" name="until" value={toLocalInput(draft.until ? parseTimeParam(draft.until) : undefined)} onChange={(e) => set('until', String(fromLocalInput((e.target as HTMLInputElement).value) ?? ''))} /></label>
      </form>
      {problem !== undefined ? <Notice kind="error">{problem}</Notice> : null}
      <Results loaded={loaded} live={props.live} state={(draft.state ?? 'all') as StateFilter} />
      {loaded.state === 'ok' ? (
        <div class="pager">
          {pages.length > 0 ? <button type="button" onClick={() => setPages([])}>Newest</button> : null}
          {loaded.page.next !== undefined ? <button type="button" onClick={() => setPages([...pages, loaded.page.next as string])}>Older</button> : null}
        </div>
      ) : null}
    </>
  );
}

function Results(props: { loaded: Loaded; live: Live; state: StateFilter }) {
  const { loaded } = props;
  if (loaded.state === 'loading') return <Empty>Loading the outcome history…</Empty>;
  if (loaded.state === 'error') return <Notice kind="error">history.list failed: {loaded.error.message} ({loaded.error.code})</Notice>;
  if (loaded.state === 'no-history') {
    // No Redis behind this broker: what the live feed saw, newest first.
    const rows: OutcomeRow[] = props.live.outcomes.map((o) => ({ ...o, id: String(o.endedAt), finishedAt: o.endedAt })).reverse();
    return (
      <>
        <Notice>This broker keeps no outcome history (no Redis): showing the calls the live feed saw finish since this page opened.</Notice>
        <Rows rows={rows} />
      </>
    );
  }
  if (loaded.page.items.length === 0) return <Empty>No finished calls match{props.state === 'all' ? '' : ` (outcome ${props.state})`}.</Empty>;
  return <Rows rows={loaded.page.items} />;
}

/** What a row shows: a history entry, or an outcome the live feed saw (without a history, no Redis). */
type OutcomeRow = Pick<HistoryItem, 'callId' | 'state' | 'method' | 'service' | 'worker' | 'attempt' | 'finishedAt' | 'durationMs' | 'code' | 'error'>;

function Rows(props: { rows: readonly OutcomeRow[] }) {
  return (
    <div class="table-wrap">
      <table class="grid" aria-label="Outcomes">
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
          {props.rows.map((o) => (
            <tr key={o.callId} data-call-id={o.callId}>
              <td class="mono">{dateTime(o.finishedAt)}</td>
              <td>
                <Badge kind={o.state as OutcomeState}>{o.state}</Badge>
                {o.code !== undefined ? <span class="muted code"> {o.code}</span> : null}
                {/* Cancelled and expired calls carry the standard message: only a failure's says something. */}
                {o.state === 'failed' && o.error?.message ? <span class="muted error-message" title={o.error.message}> {o.error.message}</span> : null}
              </td>
              <td class="strong">{o.method ?? '–'}</td>
              <td>{o.service ?? <span class="muted">–</span>}</td>
              <td class="mono">{o.worker ?? <span class="muted">–</span>}</td>
              <td class="num">{o.attempt ?? '–'}</td>
              <td class="num">{duration(o.durationMs)}</td>
              <td class="mono"><a href={callHref(o.callId)} title={o.callId}>{shortId(o.callId)}</a></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
