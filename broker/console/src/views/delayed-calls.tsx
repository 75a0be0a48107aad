// Delayed calls due soon, with a confirmed Cancel: a section of the Scheduled view (docs/scheduling.md,
// "Delayed calls"). It reads `delayed.list` (the broker's list of the delayed calls it relayed, kept in
// the in-flight store) and cancels through `delayed.cancel`; both under the gateway's one authorization
// rule, so a client token sees and cancels only its own.
import { useEffect, useState } from 'preact/hooks';
import { rpc, type RpcError } from '../api';
import { clock, relative, shortId } from '../format';
import type { Live } from '../live';
import { Empty, Notice } from './common';
import { ConfirmCancel, type CancelTarget } from './confirm-cancel';

/** One entry of `delayed.list` (the broker's DelayedCall, @warren/inflight delayed.ts). */
interface DelayedCall {
  readonly callId: string;
  readonly service: string;
  readonly method: string;
  readonly dueAt: string;
  readonly createdAt: string;
  readonly principal?: string;
}

/** How often the list is read again; it changes only as calls are sent, fall due or are cancelled. */
const refreshMs = 5000;
/** Most entries shown: the soonest due. */
const shownLimit = 100;

type Listing = { state: 'loading' } | { state: 'ok'; calls: DelayedCall[] } | { state: 'error'; error: RpcError };

/**
 * The delayed calls due soonest (not yet due), each with a Cancel that asks first, naming the call
 * by its full id. It reads the list itself (every 5 s, and when `live`'s catalogue changes), not
 * from the feed: a client token, which has no feed, sees and cancels its own delayed calls.
 *
 * @example <DelayedCallsSection live={live} />
 */
export function DelayedCallsSection(props: { live: Live }) {
  const [listing, setListing] = useState<Listing>({ state: 'loading' });
  const [confirm, setConfirm] = useState<(CancelTarget & { dueAt: string }) | undefined>();
  const [message, setMessage] = useState<{ kind: 'info' | 'error'; text: string } | undefined>();
  const [reload, setReload] = useState(0);
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    let current = true;
    const read = (): void => {
      void rpc('delayed.list', { limit: shownLimit }).then((a) => {
        if (!current) return;
        setNow(Date.now());
        setListing(a.ok ? { state: 'ok', calls: (a.result as { calls: DelayedCall[] }).calls } : { state: 'error', error: a.error });
      }, () => current && setListing({ state: 'error', error: { code: -32603, message: 'the broker did not answer' } }));
    };
    read();
    const timer = setInterval(read, refreshMs);
    return () => {
      current = false;
      clearInterval(timer);
    };
  }, [reload, props.live.catalogueVersion]);

  const cancel = async (callId: string): Promise<void> => {
    setConfirm(undefined);
    const a = await rpc('delayed.cancel', { callId });
    if (a.ok) setMessage({ kind: 'info', text: `Cancelled ${callId}: it will not run.` });
    else setMessage({ kind: 'error', text: `delayed.cancel failed: ${a.error.message} (${a.error.code})` });
    setReload((r) => r + 1);
  };

  const notServed = listing.state === 'error' && listing.error.code === -32601;
  return (
    <section class="card" aria-label="Delayed calls">
      <header class="card-head">
        <h2>Delayed calls <span class="muted">due soon</span></h2>
        <button type="button" onClick={() => setReload((r) => r + 1)}>Refresh</button>
      </header>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      {listing.state === 'loading' ? <Empty>Loading…</Empty> : null}
      {listing.state === 'error' ? (
        <Notice kind="error">{notServed ? 'This broker lists no delayed calls: it needs the in-flight store (REDIS_URL).' : `delayed.list failed: ${listing.error.message} (${listing.error.code})`}</Notice>
      ) : null}
      {listing.state === 'ok' && listing.calls.length === 0 ? <Empty>No delayed calls waiting.</Empty> : null}
      {listing.state === 'ok' && listing.calls.length > 0 ? (
        <div class="table-wrap">
          <table class="grid" aria-label="Delayed calls due soon">
            <thead>
              <tr>
                <th scope="col">Due</th>
                <th scope="col">Method</th>
                <th scope="col">Service</th>
                <th scope="col">Sent</th>
                <th scope="col">Call id</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {listing.calls.map((c) => {
                const due = Date.parse(c.dueAt);
                return (
                  <tr key={c.callId} data-delayed-call={c.callId}>
                    <td class="mono" title={c.dueAt}>{clock(due)} <span class="muted">{relative(due - now)}</span></td>
                    <td class="strong">{c.method}</td>
                    <td>{c.service === '' ? '–' : c.service}</td>
                    <td class="mono" title={c.createdAt}>{clock(Date.parse(c.createdAt))}</td>
                    <td class="mono" title={c.callId}>{shortId(c.callId)}</td>
                    <td class="actions-cell">
                      <button type="button" class="small danger" onClick={() => setConfirm({ callId: c.callId, method: c.method, dueAt: c.dueAt })} aria-label={`Cancel ${c.method} ${c.callId}`}>Cancel…</button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
      {confirm ? (
        <ConfirmCancel
          target={confirm}
          disabled={false}
          extra={{ label: 'Due', value: confirm.dueAt }}
          help="It will never run: a worker that takes it when due answers -32003 Cancelled instead."
          keepLabel="Keep it"
          onConfirm={(id) => void cancel(id)}
          onClose={() => setConfirm(undefined)}
        />
      ) : null}
    </section>
  );
}
