// One dead letter (#/dead-letters/<service>/<id>): why and when it was given up, its AMQP properties
// and headers as RabbitMQ holds them, and its request; replayed from here, its new call id links to
// the call's detail.
import { useEffect, useState } from 'preact/hooks';
import { rpc } from '../api';
import { bytes, dateTime, json } from '../format';
import { callHref, href } from '../route';
import type { DeadLetterDetail } from '../types';
import { Notice } from './common';

type Shown = { state: 'loading' } | { state: 'ok'; letter: DeadLetterDetail } | { state: 'error'; text: string };

export function DeadLetterPanel(props: { service: string; id: string; back: string; onReplayed: (replays: readonly Replayed[]) => void }) {
  const [shown, setShown] = useState<Shown>({ state: 'loading' });
  useEffect(() => {
    let live = true;
    setShown({ state: 'loading' });
    void rpc('dlq.show', { service: props.service, id: props.id }).then((a) => {
      if (!live) return;
      if (a.ok) setShown({ state: 'ok', letter: a.result as DeadLetterDetail });
      else setShown({ state: 'error', text: a.error.code === -32602 ? `No dead letter ${props.id} in ${props.service} (replayed or purged?).` : `dlq.show failed: ${a.error.message} (${a.error.code})` });
    });
    return () => {
      live = false;
    };
  }, [props.service, props.id]);

  const replay = async (): Promise<void> => {
    const a = await rpc('dlq.replay', { service: props.service, ids: [props.id] }, 60_000);
    if (a.ok) props.onReplayed((a.result as { replays: Replayed[] }).replays.map((r) => ({ ...r, service: props.service })));
    else setShown({ state: 'error', text: `Replay failed: ${a.error.message} (${a.error.code})` });
  };

  return (
    <section class="card" aria-label="Dead letter" data-dead-letter-detail={props.id}>
      <header class="card-head">
        <h2>{shown.state === 'ok' ? shown.letter.method || '(unreadable body)' : 'Dead letter'} <span class="muted mono">{props.id}</span></h2>
        <div class="actions">
          {shown.state === 'ok' ? <button type="button" onClick={() => void replay()}>Replay</button> : null}
          <button type="button" onClick={() => (location.hash = props.back)}>Close</button>
        </div>
      </header>
      {shown.state === 'loading' ? <p class="muted">Loading…</p> : null}
      {shown.state === 'error' ? <Notice kind="error">{shown.text}</Notice> : null}
      {shown.state === 'ok' ? <Letter letter={shown.letter} /> : null}
    </section>
  );
}

/** A replayed dead letter: its id, its service and the new call's id. */
export interface Replayed {
  readonly id: string;
  readonly callId: string;
  readonly service?: string;
}

/** The replays just made, each new call id linked to its detail. */
export function ReplayedList(props: { replays: readonly Replayed[] }) {
  if (props.replays.length === 0) return null;
  return (
    <ul class="replayed" aria-label="Replayed dead letters">
      {props.replays.map((r) => (
        <li key={r.callId}>
          <span class="mono">{r.id}</span> → <a class="mono" href={callHref(r.callId)} data-replayed-call={r.callId}>{r.callId}</a>
        </li>
      ))}
    </ul>
  );
}

function Letter(props: { letter: DeadLetterDetail }) {
  const d = props.letter;
  return (
    <>
      <dl class="keys">
        <dt>Service</dt>
        <dd><a href={href('services', [d.service])}>{d.service}</a></dd>
        <dt>Reason</dt>
        <dd>{d.reason}{d.code === undefined ? '' : ` (${d.code})`}</dd>
        <dt>Attempts</dt>
        <dd>{d.attempts}</dd>
        <dt>Dead-lettered</dt>
        <dd>{dateTime(d.deadLetteredAt)}</dd>
        <dt>Call id</dt>
        <dd class="mono">{d.callId === '' ? '–' : <a href={callHref(d.callId)}>{d.callId}</a>}</dd>
        <dt>Params</dt>
        <dd>{bytes(d.paramsBytes)}</dd>
      </dl>
      {d.amqp ? (
        <>
          <h3>AMQP properties</h3>
          <table class="grid compact" aria-label="AMQP properties">
            <tbody>
              <tr><th scope="row">exchange / routing key</th><td class="mono">{d.amqp.exchange || '(default)'} / {d.amqp.routingKey}</td></tr>
              {Object.entries(d.amqp.properties).map(([k, v]) => (
                <tr key={k}><th scope="row">{k}</th><td class="mono">{k === 'timestamp' && typeof v === 'number' ? `${v} (${dateTime(v * 1000)})` : String(v)}</td></tr>
              ))}
            </tbody>
          </table>
          <h3>Headers</h3>
          <pre class="code-block" aria-label="AMQP headers">{json(d.amqp.headers)}</pre>
        </>
      ) : null}
      <h3>Request</h3>
      <pre class="code-block" aria-label="Request">{json(d.request)}</pre>
    </>
  );
}
