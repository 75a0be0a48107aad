// One worker instance (#/workers/<instanceId>): where it runs, how it consumes, what it has done,
// its running calls, and the operator's controls (the broker's workers.* methods; docs/console.md).
import { useEffect, useRef, useState } from 'preact/hooks';
import { rpc } from '../api';
import { clock, duration, relative, shortId } from '../format';
import { useServices } from '../hooks';
import { isStale, type Live } from '../live';
import { callHref, href } from '../route';
import type { ClusterCall, InstanceSummary, WorkerAction } from '../types';
import { Badge, Empty, Header, Notice, ProgressBar } from './common';

const methodOf: Readonly<Record<WorkerAction, string>> = { pause: 'workers.pause', resume: 'workers.resume', drain: 'workers.drain', 'cancel-all': 'workers.cancelAll' };

export function WorkerView(props: { live: Live; instanceId: string }) {
  const [reload, setReload] = useState(0);
  // Faster than the Services view: a control's effect shows within a second or two.
  const services = useServices(props.live.catalogueVersion + reload, 2000);
  const [asking, setAsking] = useState<WorkerAction | undefined>(undefined);
  /** How many running calls the Cancel all dialog named when it opened (the list may move while it is open). */
  const [named, setNamed] = useState(0);
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<{ kind: 'info' | 'error'; text: string } | undefined>(undefined);
  const title = `Worker ${props.instanceId}`;
  if (services.state === 'loading') return <><Header title={title} /><Empty>Loading…</Empty></>;
  if (services.state === 'error') return <><Header title={title} /><Notice kind="error">{services.error}</Notice></>;
  const service = services.value.services.find((s) => s.instances.some((i) => i.instanceId === props.instanceId));
  const instance = service?.instances.find((i) => i.instanceId === props.instanceId);
  if (!service || !instance) {
    return (
      <>
        <Header title={title} />
        <Notice>No live instance {props.instanceId}: it stopped, was drained, or has not announced itself. <a href={href('services')}>All services</a></Notice>
      </>
    );
  }
  const running = (props.live.inflight?.calls ?? []).filter((c) => c.worker === props.instanceId);
  const offline = isStale(props.live) || busy;
  const act = async (action: WorkerAction): Promise<void> => {
    setAsking(undefined);
    setBusy(true);
    try {
      const answer = await rpc(methodOf[action], { instanceId: props.instanceId, service: service.name });
      if (!answer.ok) setSaid({ kind: 'error', text: `${action}: ${answer.error.message} (${answer.error.code})` });
      else {
        const r = answer.result as { applied: boolean; cancelled?: number };
        setSaid(r.applied
          ? { kind: 'info', text: action === 'cancel-all' ? cancelledText(r.cancelled ?? 0, named) : `${label(action)}: applied by the worker.` }
          : { kind: 'error', text: `${label(action)} sent, but the worker did not say it applied it.` });
      }
    } finally {
      setBusy(false);
      setReload((n) => n + 1);
    }
  };
  const w = instance.worker;
  return (
    <>
      <Header title={title} sub={<>of <a href={href('services', [service.name])}>{service.name}</a> · <State instance={instance} /></>}>
        {w?.paused === true
          ? <button type="button" disabled={offline || w.draining} onClick={() => void act('resume')} data-worker-action="resume">Resume</button>
          : <button type="button" disabled={offline || w === undefined || w.draining} onClick={() => void act('pause')} data-worker-action="pause">Pause consuming</button>}
        <button type="button" disabled={offline || w === undefined || w.draining} onClick={() => setAsking('drain')} data-worker-action="drain">Drain…</button>
        <button type="button" class="danger" disabled={offline || w === undefined || running.length === 0} onClick={() => { setNamed(running.length); setAsking('cancel-all'); }} data-worker-action="cancel-all">Cancel all running…</button>
      </Header>
      {w === undefined ? <Notice>This instance does not report worker details or take controls (an older Warren, or another language's).</Notice> : null}
      {said ? <Notice kind={said.kind}>{said.text}</Notice> : null}
      <dl class="keys worker-facts" aria-label="Worker facts">
        <dt>Uptime</dt>
        <dd>{instance.startedAt === undefined ? '–' : <span title={`started ${clock(instance.startedAt)}`}>{duration(services.at - instance.startedAt)}</span>}</dd>
        <dt>Host / pid</dt>
        <dd class="mono">{w ? `${w.host} / ${w.pid}` : '–'}</dd>
        <dt>Version</dt>
        <dd class="mono">{typeof instance.metadata?.['version'] === 'string' ? instance.metadata['version'] : '–'}</dd>
        <dt>Prefetch</dt>
        <dd>{w?.prefetch ?? '–'}</dd>
        <dt>Handled / failed</dt>
        <dd data-worker-counts>{w ? <>{w.handled} / <span class={w.failed > 0 ? 'bad' : undefined}>{w.failed}</span></> : '–'}</dd>
        <dt>Last seen</dt>
        <dd>{instance.lastSeen === undefined ? '–' : relative(instance.lastSeen - services.at)}</dd>
        {w?.lastControl ? (
          <>
            <dt>Last control</dt>
            <dd>{w.lastControl.action} at {clock(w.lastControl.at)}{w.lastControl.cancelled === undefined ? '' : ` (${w.lastControl.cancelled} cancelled)`}</dd>
          </>
        ) : null}
      </dl>
      <h2>Running here ({running.length})</h2>
      {running.length === 0 ? <Empty>{props.live.inflight?.configured === false ? 'No in-flight store: running calls are not listed.' : 'No call running on this worker.'}</Empty> : <RunningCalls calls={running} now={props.live.inflight?.at ?? Date.now()} />}
      {asking ? <ConfirmWorkerAction action={asking} instanceId={props.instanceId} running={named} onConfirm={() => void act(asking)} onClose={() => setAsking(undefined)} /> : null}
    </>
  );
}

function label(action: WorkerAction): string {
  return action === 'pause' ? 'Pause' : action === 'resume' ? 'Resume' : action === 'drain' ? 'Drain' : 'Cancel all';
}

function State(props: { instance: InstanceSummary }) {
  const w = props.instance.worker;
  if (w?.draining === true) return <Badge kind="failed">draining</Badge>;
  if (w?.paused === true) return <Badge kind="neutral">paused</Badge>;
  if (props.instance.consuming === false) return <Badge kind="failed">not consuming</Badge>;
  return <Badge kind="done">consuming</Badge>;
}

function RunningCalls(props: { calls: readonly ClusterCall[]; now: number }) {
  return (
    <table class="grid compact" aria-label="Calls running on this worker">
      <thead>
        <tr>
          <th scope="col">Call</th>
          <th scope="col">Method</th>
          <th scope="col" class="num">Attempt</th>
          <th scope="col" class="num">Age</th>
          <th scope="col">Progress</th>
        </tr>
      </thead>
      <tbody>
        {props.calls.map((c) => (
          <tr key={c.callId} data-call-id={c.callId}>
            <td class="mono"><a href={callHref(c.callId)} title={c.callId}>{shortId(c.callId)}</a></td>
            <td class="strong">{c.method}</td>
            <td class="num">{c.attempt ?? 1}</td>
            <td class="num">{c.startedAt === undefined ? '–' : duration(props.now - c.startedAt)}</td>
            <td><ProgressBar fraction={c.progress?.fraction} message={c.progress?.message} label={`Progress of ${c.callId}`} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What Cancel all did, saying so when the worker cancelled more than the dialog named (it took calls while the dialog was open). */
function cancelledText(cancelled: number, named: number): string {
  const text = `Cancelled ${cancelled} running call${cancelled === 1 ? '' : 's'}`;
  return cancelled > named ? `${text}: ${cancelled - named} more than the ${named} named, started while the dialog was open.` : `${text}.`;
}

/** Drain and cancel-all are asked first, naming the worker and what they do: neither can be undone. */
function ConfirmWorkerAction(props: { action: WorkerAction; instanceId: string; running: number; onConfirm: () => void; onClose: () => void }) {
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => keep.current?.focus(), []);
  const cancelAll = props.action === 'cancel-all';
  return (
    <div class="overlay" onClick={props.onClose} onKeyDown={(e) => e.key === 'Escape' && props.onClose()}>
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="worker-action-title" onClick={(e) => e.stopPropagation()} data-confirm-worker-action={props.action}>
        <h2 id="worker-action-title">{cancelAll ? `Cancel all ${props.running} running call${props.running === 1 ? '' : 's'}?` : 'Drain this worker?'}</h2>
        <p class="mono">{props.instanceId}</p>
        <p class="help">
          {cancelAll
            ? 'Every call running on this worker now is told to stop, and each caller gets -32003 Cancelled. Calls still in the queue are not touched.'
            : 'It takes no new call, finishes the ones it runs (within its shutdown grace), then withdraws and stops. Other instances take the queue.'}
        </p>
        <div class="send-row">
          <button type="button" ref={keep} onClick={props.onClose}>Keep it</button>
          <button type="button" class="danger" onClick={props.onConfirm}>{cancelAll ? 'Cancel all' : 'Drain'}</button>
        </div>
      </div>
    </div>
  );
}
