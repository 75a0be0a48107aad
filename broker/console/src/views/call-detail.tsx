// One call's detail (#/calls/<callId>): what the store knows of it (calls.show): state, where and when
// its attempts ran, its params and trace id, its progress and progress history, its result or error,
// and its outcome history entry. Followed every
// second while it runs; a call the store has no record of says so, with what the live feed knows.
import { useEffect, useState } from 'preact/hooks';
import { rpc, type RpcError } from '../api';
import { dateTime, duration, json, relative } from '../format';
import type { Live } from '../live';
import { href } from '../route';
import type { CallDetail } from '../types';
import { Badge, Empty, Header, Notice, ProgressBar } from './common';

const followMs = 1000;
/** How an earlier attempt ended, in words. */
const attemptOutcome = { lost: 'worker lost (taken over)', retried: 'failed, retried', released: 'given back (shutdown)' } as const;
const finished: ReadonlySet<string> = new Set(['done', 'failed', 'cancelled', 'expired']);

type Loaded = { readonly state: 'loading' } | { readonly state: 'ok'; readonly call: CallDetail } | { readonly state: 'error'; readonly error: RpcError };

export function CallDetailView(props: { callId: string; live: Live }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setLoaded({ state: 'loading' });
    const load = (): void => {
      rpc('calls.show', { callId: props.callId }).then((answer) => {
        if (!live) return;
        if (!answer.ok) {
          setLoaded({ state: 'error', error: answer.error });
          return;
        }
        const call = answer.result as CallDetail;
        setLoaded({ state: 'ok', call });
        // Followed until it ends (or is unknown: it may not have reached the store yet).
        if (!finished.has(call.state)) timer = setTimeout(load, followMs);
      }, (err: unknown) => live && setLoaded({ state: 'error', error: { code: 0, message: err instanceof Error ? err.message : String(err) } }));
    };
    load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.callId]);

  return (
    <>
      <Header title="Call" sub={<span class="mono" data-call-detail-id>{props.callId}</span>}>
        <a class="button ghost" href={href('outcomes')}>All outcomes</a>
      </Header>
      <Body loaded={loaded} live={props.live} callId={props.callId} />
    </>
  );
}

function Body(props: { loaded: Loaded; live: Live; callId: string }) {
  const { loaded } = props;
  if (loaded.state === 'loading') return <Empty>Looking the call up…</Empty>;
  if (loaded.state === 'error') {
    const reason = (loaded.error.data as { reason?: string } | undefined)?.reason;
    if (loaded.error.code === -32601) return <Notice kind="error">This broker has no in-flight store (no Redis): calls cannot be looked up by id.</Notice>;
    return <Notice kind="error">calls.show failed: {loaded.error.message} ({loaded.error.code}{reason === undefined ? '' : `, ${reason}`})</Notice>;
  }
  const c = loaded.call;
  // The gateway's own view of a call it relays now (not yet taken by a worker, or untracked).
  const relayed = props.live.inflight?.gateway.find((g) => g.callId === props.callId);
  if (c.state === 'unknown') {
    return (
      <Notice>
        No record of this call in the store{relayed ? `: the gateway is relaying it now (${relayed.method}), no worker has taken it yet` : ': it never reached a tracked worker, or its record and history entry have expired'}.
      </Notice>
    );
  }
  const error = c.response !== undefined && 'error' in c.response ? c.response.error : undefined;
  const ended = c.finishedAt ?? c.history?.finishedAt;
  const took = c.history?.durationMs ?? (c.startedAt !== undefined && ended !== undefined ? ended - c.startedAt : undefined);
  return (
    <div class="call-detail" data-call-state={c.state}>
      <dl class="call-facts">
        <dt>State</dt>
        <dd><Badge kind={c.state}>{c.state}</Badge>{c.cancelRequested && !finished.has(c.state) ? <span class="muted"> cancel requested</span> : null}</dd>
        <dt>Method</dt>
        <dd class="strong">{c.method ?? '–'}</dd>
        <dt>Service</dt>
        <dd>{c.service ? <a href={href('services', [c.service])}>{c.service}</a> : '–'}</dd>
        <dt>Deadline</dt>
        <dd>{dateTime(c.deadline)}{c.deadline !== undefined && !finished.has(c.state) ? <span class="muted"> ({relative(c.deadline - Date.now())})</span> : null}</dd>
        {c.nextTryAt !== undefined ? (<><dt>Next attempt</dt><dd>{dateTime(c.nextTryAt)}</dd></>) : null}
        {c.traceId !== undefined ? (<><dt>Trace id</dt><dd class="mono" data-trace-id>{c.traceId}</dd></>) : null}
        {c.progress ? (<><dt>Progress</dt><dd><ProgressBar fraction={c.progress.fraction} message={c.progress.message} label="Progress" /></dd></>) : null}
      </dl>
      {c.params ? <Params params={c.params} /> : null}
      <h2>Attempts</h2>
      <table class="grid" aria-label="Attempts">
        <thead>
          <tr><th scope="col" class="num">Attempt</th><th scope="col">Worker</th><th scope="col">Started</th><th scope="col">Ended</th><th scope="col" class="num">Took</th><th scope="col">Outcome</th></tr>
        </thead>
        <tbody>
          {(c.attempts ?? []).map((a) => (
            <tr key={a.attempt} data-attempt={a.attempt}>
              <td class="num">{a.attempt}</td>
              <td class="mono">{a.worker}</td>
              <td class="mono">{dateTime(a.startedAt)}</td>
              <td class="mono">{dateTime(a.endedAt)}</td>
              <td class="num">{duration(a.endedAt - a.startedAt)}</td>
              <td><Badge kind={a.outcome === 'released' ? 'neutral' : 'failed'}>{attemptOutcome[a.outcome]}</Badge></td>
            </tr>
          ))}
          <tr data-attempt={c.attempt ?? 1}>
            <td class="num">{c.attempt ?? 1}</td>
            <td class="mono">{c.worker ?? <span class="muted">not taken yet</span>}</td>
            <td class="mono">{dateTime(c.startedAt)}</td>
            <td class="mono">{dateTime(ended)}</td>
            <td class="num">{duration(took)}</td>
            <td>{finished.has(c.state) ? <Badge kind={c.state}>{c.state}</Badge> : <span class="muted">{c.state}</span>}{error ? <span class="muted code"> {error.code}</span> : null}</td>
          </tr>
        </tbody>
      </table>
      {c.progressLog && c.progressLog.length > 0 ? <ProgressHistory log={c.progressLog} /> : null}
      {error ? (
        <section aria-label="Error">
          <h2>Error</h2>
          <p class="error-line"><strong>{error.code}</strong> {error.message}</p>
          {error.data !== undefined ? <pre class="code-block" data-error-data>{json(error.data)}</pre> : null}
        </section>
      ) : null}
      {c.response && 'result' in c.response ? (
        <section aria-label="Result">
          <h2>Result</h2>
          <pre class="code-block" data-result>{json(c.response.result)}</pre>
        </section>
      ) : c.state === 'done' ? <Notice>The result is no longer stored (a finished call's result is kept five minutes past its deadline); the history keeps that it succeeded.</Notice> : null}
    </div>
  );
}

/** The call's params: pretty when whole, as stored (the first 4 KiB) when cut. */
function Params(props: { params: NonNullable<CallDetail['params']> }) {
  const { text, truncated, chars } = props.params;
  return (
    <section aria-label="Params">
      <h2>Params</h2>
      {truncated ? <Notice>Truncated: the first {text.length.toLocaleString()} of {chars.toLocaleString()} characters are kept.</Notice> : null}
      <pre class="code-block" data-params data-truncated={truncated ? 'true' : undefined}>{truncated ? text : pretty(text)}</pre>
    </section>
  );
}

function pretty(text: string): string {
  try {
    return json(JSON.parse(text));
  } catch {
    return text;
  }
}

/** Every stored progress report, oldest first (the last ones, bounded by the store). */
function ProgressHistory(props: { log: NonNullable<CallDetail['progressLog']> }) {
  return (
    <section aria-label="Progress history">
      <h2>Progress history</h2>
      <table class="grid" aria-label="Progress history">
        <thead>
          <tr><th scope="col">At</th><th scope="col" class="num">Done</th><th scope="col">Message</th></tr>
        </thead>
        <tbody>
          {props.log.map((p, i) => (
            <tr key={i} data-progress-entry>
              <td class="mono">{dateTime(p.at)}</td>
              <td class="num">{Math.round(p.fraction * 100)}%</td>
              <td>{p.message ?? <span class="muted">–</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
