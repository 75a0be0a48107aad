import { useState } from 'preact/hooks';
import { rpc } from '../api';
import { clock, duration, relative } from '../format';
import { usePolledRpc } from '../hooks';
import type { Live } from '../live';
import { callHref } from '../route';
import type { ScheduleItem } from '../types';
import { Badge, GridTable, Header, ListingStatus, Notice } from './common';
import { DelayedCallsSection } from './delayed-calls';

/** How often the list is read again: last runs and next runs move every second on a busy schedule. */
const refreshMs = 2000;

const when = (t: ScheduleItem['timing']): string => (t.kind === 'cron' ? `${t.cron} (${t.timezone})` : `every ${duration(t.everyMs)}`);
const catchUp = (c: ScheduleItem['catchUp']): string => (c.policy === 'all' ? `all, up to ${String(c.max)}` : c.policy);

/**
 * The Scheduled view (`#/scheduled`): delayed calls due soon (DelayedCallsSection) above the schedules, each with its last run and outcome, its next run and whether it is
 * paused; run now, pause, resume and delete (asked first) through the schedule.* methods.
 */
export function ScheduledView(props: { live: Live }) {
  const { listing, now, refresh } = usePolledRpc<{ durable: boolean; items: ScheduleItem[] }>('schedule.list', {}, refreshMs);
  const [message, setMessage] = useState<{ kind: 'info' | 'error'; text: string } | undefined>();
  const [confirmDelete, setConfirmDelete] = useState<string | undefined>();

  const act = async (label: string, method: string, name: string): Promise<void> => {
    setMessage({ kind: 'info', text: `${label} ${name}…` });
    const a = await rpc(method, { name });
    if (a.ok) {
      const callId = (a.result as { callId?: string } | null)?.callId;
      setMessage({ kind: 'info', text: `${label} ${name}: done${callId === undefined ? '' : ` (call ${callId})`}` });
    } else setMessage({ kind: 'error', text: `${label} ${name} failed: ${a.error.message} (${a.error.code})` });
    refresh();
  };

  const notServed = listing.state === 'error' && listing.error.code === -32601;
  return (
    <>
      <DelayedCallsSection live={props.live} />
      <Header title="Schedules" sub="Periodic calls: when each last ran and how it ended, when it runs next.">
        <button type="button" onClick={refresh}>Refresh</button>
      </Header>
      {listing.state === 'ok' && !listing.value.durable ? <Notice kind="info">Not durable: these schedules live in the embedded broker's memory and end with it.</Notice> : null}
      {message ? <Notice kind={message.kind}>{message.text}</Notice> : null}
      <ListingStatus
        listing={listing}
        method="schedule.list"
        notServed="This broker does not serve schedules (schedule.list: method not found; it needs REDIS_URL)."
        isEmpty={(v) => v.items.length === 0}
        empty={<>No schedules. Add one with <code>warren schedule add</code>.</>}
      />
      {listing.state === 'ok' && listing.value.items.length > 0 ? (
        <GridTable label="Schedules" columns={['Name', 'Method', 'When', 'Overlap', 'Catch-up', 'Last run', 'Outcome', 'Next run']} actions>
          {listing.value.items.map((s) => {
            const last = s.state.lastRun;
            return (
              <tr key={s.name} data-schedule={s.name} data-paused={s.paused ? 'true' : 'false'}>
                <td class="strong">{s.name}{s.source === 'runtime' ? null : <span class="muted"> {s.source}</span>}</td>
                <td>{s.method}</td>
                <td class="mono">{when(s.timing)}</td>
                <td>{s.overlap}</td>
                <td>{catchUp(s.catchUp)}</td>
                <td class="mono" title={last === undefined ? undefined : clock(last.at)}>{last === undefined ? '–' : <a href={callHref(last.callId)}>{relative(last.at - now)}</a>}{last?.manual ? <span class="muted"> (run now)</span> : null}</td>
                <td data-outcome={last?.outcome}>{last === undefined ? '–' : <Badge kind={last.outcome === 'ok' ? 'done' : last.outcome === 'error' ? 'failed' : 'expired'}>{last.outcome === 'error' ? `error ${String(last.errorCode ?? '')}` : last.outcome}</Badge>}</td>
                <td class="mono">{s.paused ? <Badge kind="cancelled">paused</Badge> : s.nextRun === undefined ? '–' : <span title={clock(s.nextRun)}>{relative(s.nextRun - now)}</span>}</td>
                <td class="actions-cell">
                  <button type="button" class="small" disabled={notServed} onClick={() => void act('Run now', 'schedule.runNow', s.name)} aria-label={`Run ${s.name} now`}>Run now</button>
                  {s.paused
                    ? <button type="button" class="small" onClick={() => void act('Resume', 'schedule.resume', s.name)} aria-label={`Resume ${s.name}`}>Resume</button>
                    : <button type="button" class="small" onClick={() => void act('Pause', 'schedule.pause', s.name)} aria-label={`Pause ${s.name}`}>Pause</button>}
                  {confirmDelete === s.name
                    ? <button type="button" class="small danger" onClick={() => { setConfirmDelete(undefined); void act('Delete', 'schedule.remove', s.name); }} aria-label={`Confirm delete of ${s.name}`}>Confirm delete</button>
                    : <button type="button" class="small danger" onClick={() => setConfirmDelete(s.name)} aria-label={`Delete ${s.name}`}>Delete…</button>}
                </td>
              </tr>
            );
          })}
        </GridTable>
      ) : null}
    </>
  );
}
