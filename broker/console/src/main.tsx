// The Warren console: one page, seven views, one live feed.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { getJson, onUnauthorized, setToken, token, UnauthorizedError, type AuthProblem } from './api';
import { openFeed } from './feed';
import { clock } from './format';
import { isStale, type Live } from './live';
import { href, useRoute } from './route';
import { InflightMirror } from './inflight-mirror';
import type { InflightDelta, InflightEvent, Outcome, ServicesResponse, ThroughputSnapshot } from './types';
import { ConsoleView } from './views/console';
import { DeadLettersView } from './views/dead-letters';
import { Help } from './views/help';
import { InflightView } from './views/inflight';
import { CallDetailView } from './views/call-detail';
import { CallSearch } from './views/call-search';
import { OutcomesView } from './views/outcomes';
import { ScheduledView } from './views/scheduled';
import { ServicesView } from './views/services';
import { ThroughputView } from './views/throughput';
import { WorkerView } from './views/worker';
import { TokenForm } from './views/token-form';

const views = [
  { id: 'services', label: 'Services', key: 's' },
  { id: 'inflight', label: 'In flight', key: 'f' },
  { id: 'outcomes', label: 'Outcomes', key: 'o' },
  { id: 'dead-letters', label: 'Dead letters', key: 'd' },
  { id: 'scheduled', label: 'Scheduled', key: 'h' },
  { id: 'console', label: 'Console', key: 'c' },
  { id: 'throughput', label: 'Throughput', key: 't' },
] as const;
type ViewId = (typeof views)[number]['id'];

/** Most outcomes the page keeps (the broker keeps its own, larger, history). */
const maxOutcomes = 500;

function isView(id: string): id is ViewId {
  return views.some((v) => v.id === id);
}

function App() {
  const [auth, setAuth] = useState<'checking' | 'ok' | AuthProblem>('checking');
  const [attempt, setAttempt] = useState(0);
  const route = useRoute();
  // A worker's page (#/workers/<instance>) lives under Services, where its links are.
  const worker = route.view === 'workers' ? (route.path[0] ?? '') : undefined;
  // `#/calls/<callId>`: one call's detail, reached from any row or id, or the header's search.
  const callId = route.view === 'calls' ? route.path[0] : undefined;
  const view: ViewId = isView(route.view) ? route.view : 'services';
  const [live, setLive] = useState<Live & { liveAt?: number }>({ feed: 'connecting', outcomes: [], catalogueVersion: 0 });
  const [help, setHelp] = useState(false);
  /** What the broker runs on (GET /services `mode`): an embedded one is shown as not durable, always. */
  const [mode, setMode] = useState<ServicesResponse['mode'] | undefined>(undefined);
  const main = useRef<HTMLElement>(null);

  // Whether the broker wants a token: try without (or with the tab's), ask when refused.
  useEffect(() => {
    getJson<ServicesResponse>('/services')
      .then((body) => {
        setMode(body.mode);
        setAuth('ok');
      })
      .catch((err: unknown) => setAuth(err instanceof UnauthorizedError ? err.problem : 'ok'));
    return onUnauthorized((problem) => {
      // A token that did not do is forgotten, so a reload asks again rather than failing the same way.
      if (problem !== 'missing') setToken(undefined);
      setAuth(problem);
    });
  }, [attempt]);

  useEffect(() => {
    if (auth !== 'ok') return undefined;
    const mirror = new InflightMirror();
    let shownAt = 0;
    return openFeed(
      (event, data) => {
        // Applied here, once per event (not in the state updater, which may run twice).
        let inflight = event === 'inflight' ? mirror.full(data as InflightEvent) : event === 'inflight-delta' ? mirror.delta(data as InflightDelta) : undefined;
        // A long list comes in several frames (`more`): drawn once it is whole, or every 250 ms while a slow read lasts.
        if (inflight !== undefined && (data as { more?: boolean }).more === true && performance.now() - shownAt < 250) inflight = undefined;
        if (inflight !== undefined) shownAt = performance.now();
        if (inflight === undefined && (event === 'inflight' || event === 'inflight-delta')) return;
        setLive((l) => {
          switch (event) {
            case 'inflight':
            case 'inflight-delta':
              // `receivedAt`: when the page read it, for the feed-to-DOM measure In flight makes (bench/console-bench.ts).
              return inflight === undefined ? l : { ...l, inflight: { ...inflight, receivedAt: performance.now() }, liveAt: Date.now() };
            case 'throughput':
              return { ...l, throughput: data as ThroughputSnapshot };
            case 'catalogue':
              return { ...l, catalogueVersion: l.catalogueVersion + 1 };
            case 'outcomes': {
              const d = data as { reset?: boolean; items: Outcome[] };
              const all = d.reset ? d.items : [...l.outcomes, ...d.items];
              return { ...l, outcomes: all.slice(-maxOutcomes) };
            }
            default:
              return l;
          }
        });
      },
      (feed) => setLive((l) => ({ ...l, feed })),
    );
  }, [auth]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const target = e.target as HTMLElement | null;
      if (target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))) {
        if (e.key === 'Escape') target.blur();
        return;
      }
      if (e.key === '?') {
        setHelp((h) => !h);
        return;
      }
      if (e.key === 'Escape') setHelp(false);
      const v = views.find((x) => x.key === e.key);
      if (v) {
        e.preventDefault();
        location.hash = href(v.id);
        main.current?.focus();
      }
      if (e.key === '/') {
        const filter = document.querySelector<HTMLInputElement>('[data-filter]');
        if (filter) {
          e.preventDefault();
          filter.focus();
        }
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    const label = callId !== undefined ? `Call ${callId}` : views.find((v) => v.id === view)?.label ?? '';
    document.title = `${label} · Warren console`;
  }, [view, callId]);

  if (auth === 'checking') return <div class="splash">Connecting to the broker…</div>;
  if (auth !== 'ok') return <TokenForm problem={auth} onDone={(t) => { setToken(t); setAuth('checking'); setAttempt((a) => a + 1); }} />;

  const stale = isStale(live);
  const running = runningCount(live.inflight);
  return (
    <div class="shell">
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <div class="brand">
          <img src="/console/assets/favicon.svg" alt="" width="22" height="22" />
          <span>Warren</span>
        </div>
        <nav aria-label="Views">
          <ul>
            {views.map((v) => (
              <li key={v.id}>
                <a href={href(v.id)} aria-current={callId === undefined && view === v.id ? 'page' : undefined} aria-keyshortcuts={v.key}>
                  {v.label}
                  {v.id === 'inflight' && running > 0 ? <span class="count" aria-label={`${running} running`}>{running}</span> : null}
                  <kbd aria-hidden="true">{v.key}</kbd>
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class={`status status-${live.feed}`} role="status" aria-live="polite" title="The live feed from the broker">
          <span class="dot" aria-hidden="true" />
          {live.feed === 'live' ? 'live' : live.feed === 'connecting' ? 'connecting…' : live.feed === 'down' ? 'reconnecting…' : 'token refused'}
        </div>
        <CallSearch />
        <button type="button" class="ghost" onClick={() => setHelp(true)} aria-keyshortcuts="?">Keys <kbd>?</kbd></button>
        {token() !== undefined ? (
          <button type="button" class="ghost" onClick={() => { setToken(undefined); location.reload(); }}>Forget token</button>
        ) : null}
      </header>
      {mode === 'embedded' ? (
        <div class="mode-embedded" role="note">
          <strong>embedded: in memory, not durable.</strong> The broker and the services run in one process over an in-memory broker and stores; queues, jobs and results are lost when it stops.
        </div>
      ) : null}
      {stale ? (
        <div class="stale-banner" role="alert" data-stale-banner>
          <strong>Live feed lost{live.feed === 'connecting' ? ', reconnecting' : ''}.</strong> What you see is how things stood at {clock(live.liveAt)}: rows are dimmed, ages and deadlines are not counting, and actions are off until the feed is back.
        </div>
      ) : null}
      <main id="main" ref={main} tabIndex={-1} aria-label={callId !== undefined ? 'Call' : views.find((v) => v.id === view)?.label} class={stale ? 'stale' : undefined}>
        {callId !== undefined ? <CallDetailView callId={callId} live={live} /> : null}
        {callId === undefined && view === 'services' && (worker === undefined ? <ServicesView live={live} route={route} /> : <WorkerView live={live} instanceId={worker} />)}
        {callId === undefined && view === 'inflight' && <InflightView live={live} />}
        {callId === undefined && view === 'outcomes' && <OutcomesView live={live} route={route} />}
        {callId === undefined && view === 'dead-letters' && <DeadLettersView live={live} />}
        {callId === undefined && view === 'scheduled' && <ScheduledView live={live} />}
        {callId === undefined && view === 'console' && <ConsoleView live={live} />}
        {callId === undefined && view === 'throughput' && <ThroughputView live={live} />}
      </main>
      {help ? <Help views={views} onClose={() => setHelp(false)} /> : null}
    </div>
  );
}

/** Calls in flight: the cluster's, and the gateway's no worker has taken yet (a set: 1,000 × 1,000 lookups would not do). */
function runningCount(inflight: InflightEvent | undefined): number {
  if (!inflight) return 0;
  const cluster = new Set(inflight.calls.map((c) => c.callId));
  return cluster.size + inflight.gateway.filter((g) => !cluster.has(g.callId)).length;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
