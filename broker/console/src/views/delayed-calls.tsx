// Delayed calls due soon, with a confirmed Cancel: a section of the Scheduled view (docs/scheduling.md,
// "Delayed calls"). It reads `delayed.list` (the broker's list of the delayed calls it relayed, kept in
// the in-flight store) and cancels through `delayed.cancel`; both under the gateway's one authorization
// rule, so a client token sees and cancels only its own.
import { useState } from 'preact/hooks';
import { rpc } from '../api';
import { clock, relative, shortId } from '../format';
import { usePolledRpc } from '../hooks';
import type { Live } from '../live';
import type { DelayedCall } from '../types';
import { GridTable, ListingStatus, Notice } from './common';
import { ConfirmCancel, type CancelTarget } from './confirm-cancel';

/** How often the list is read again; it changes only as calls are sent, fall due or are cancelled. */
const refreshMs = 5000;
/** Most entries shown: the soonest due. */
const shownLimit = 100;

/**
 * The delayed calls due soonest (not yet due), each with a Cancel that asks first, naming the call
 * by its full id. It reads the list itself (every 5 s, and when `live`'s catalogue changes), not
 * from the feed: a client token, which has no feed, sees and cancels its own delayed calls.
 *
 * @example <DelayedCallsSection live={live} />
 */
export function DelayedCallsSection(props: { live: Live }) {
  const { listing, now, refresh } = usePolledRpc<{ calls: DelayedCall[] }>('delayed.list', { limit: shownLimit }, refreshMs, [props.live.catalogueVersion]);
  const [confirm, setConfirm] = useState<(CancelTarget & { dueAt: string }) | undefined>();
  const [message, setMessage] = useState<{ kind: 'info' | 'error'; text: string } | undefined>();
  const cancel = async (callId: string): Promise<void> => {
    setConfirm(undefined);
    const a = await rpc('delayed.cancel', { callId });
    if (a.ok) setMessage({ kind: 'info', text: `Cancelled ${callId}: it will not run.` });
    else setMessage({ kind: 'error', text: `delayed.cancel failed: ${a.error.message} (${a.error.code})` });
    refresh();
  };

  return (
    <section class="card" aria-label="Delayed calls">
      <header class="card-head">
        <h2>Delayed calls <span class="muted">due soon</span></h2>
        <button type="button" onClick={refresh}>Refresh</button>
      </header>
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <ListingStatus
        listing={listing}
        method="delayed.list"
        notServed="This broker lists no delayed calls: it needs the in-flight store (REDIS_URL)."
        isEmpty={(v) => v.calls.length === 0}
        empty="No delayed calls waiting."
      />
      {listing.state === 'ok' && listing.value.calls.length > 0 ? (
        <GridTable label="Delayed calls due soon" columns={['Due', 'Method', 'Service', 'Sent', 'Call id']} actions>
          {listing.value.calls.map((c) => {
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
        </GridTable>
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
