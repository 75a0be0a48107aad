import { useEffect, useRef } from 'preact/hooks';
import { countBy, type Row } from '../inflight-rows';

/** The calls a bulk cancel was asked for, copied when asked: whatever the rows do after, these are what is cancelled. */
export interface BulkTarget {
  /** What the operator picked: `selection`, or `method <name>`. */
  readonly what: string;
  readonly rows: readonly Row[];
}

/** Ids listed in the dialog at most; the count and the methods always cover all of them. */
const maxListed = 50;

/**
 * Asks before cancelling many calls, saying how many and which: the count, the count per method,
 * and the ids. What is cancelled is exactly this list, never "whatever matches now".
 */
export function ConfirmBulkCancel(props: { target: BulkTarget; disabled: boolean; onConfirm: (callIds: readonly string[]) => void; onClose: () => void }) {
  const keep = useRef<HTMLButtonElement>(null);
  // Focus on the harmless choice: Enter right after the click keeps the calls.
  useEffect(() => keep.current?.focus(), []);
  const { rows } = props.target;
  const n = rows.length;
  const ids = rows.map((r) => r.callId);
  return (
    <div class="overlay" onClick={props.onClose} onKeyDown={(e) => e.key === 'Escape' && props.onClose()}>
      <div class="dialog bulk" role="alertdialog" aria-modal="true" aria-labelledby="bulk-title" aria-describedby="bulk-what" onClick={(e) => e.stopPropagation()} data-confirm-count={n}>
        <h2 id="bulk-title">Cancel {n} call{n === 1 ? '' : 's'}?</h2>
        <p id="bulk-what">
          {props.target.what}: {countBy(rows, 'method').map((g) => `${g.count} × ${g.key}`).join(', ')}. Calls that start after this are not included.
        </p>
        <ul class="bulk-ids mono" aria-label="Calls to cancel">
          {ids.slice(0, maxListed).map((id) => <li key={id} data-confirm-id={id}>{id}</li>)}
          {n > maxListed ? <li class="muted">and {n - maxListed} more</li> : null}
        </ul>
        <p class="help">Each caller gets -32003 Cancelled; running handlers are told to stop.</p>
        <div class="send-row">
          <button type="button" ref={keep} onClick={props.onClose}>Keep them running</button>
          <button type="button" class="danger" disabled={props.disabled || n === 0} onClick={() => props.onConfirm(ids)}>Cancel {n} call{n === 1 ? '' : 's'}</button>
        </div>
      </div>
    </div>
  );
}
