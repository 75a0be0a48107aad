import { useEffect, useRef } from 'preact/hooks';

/** The call a Cancel was pressed on, copied when pressed: rows below may reflow, this does not. */
export interface CancelTarget {
  readonly callId: string;
  readonly method: string;
  readonly worker?: string | undefined;
}

/**
 * Asks before a cancel, naming the call by its full id: In flight's rows reflow every second as
 * calls above finish, so the row under the pointer may not be the one aimed at. What is cancelled
 * is the id shown here, never a row position.
 */
export function ConfirmCancel(props: {
  target: CancelTarget;
  disabled: boolean;
  onConfirm: (callId: string) => void;
  onClose: () => void;
  /** What cancelling does, under the call's keys. @default the in-flight call's: its caller gets -32003, a running handler stops */
  help?: string;
  /** The harmless button. @default 'Keep it running' */
  keepLabel?: string;
  /** A third key, after Method: e.g. when a delayed call is due. @default the worker */
  extra?: { readonly label: string; readonly value: string };
}) {
  const keep = useRef<HTMLButtonElement>(null);
  // Focus on the harmless choice: Enter right after the click keeps the call.
  useEffect(() => keep.current?.focus(), []);
  const { target } = props;
  return (
    <div class="overlay" onClick={props.onClose} onKeyDown={(e) => e.key === 'Escape' && props.onClose()}>
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="cancel-title" aria-describedby="cancel-what" onClick={(e) => e.stopPropagation()} data-confirm-call-id={target.callId}>
        <h2 id="cancel-title">Cancel this call?</h2>
        <dl id="cancel-what" class="keys">
          <dt>Call id</dt>
          <dd class="mono" data-confirm-id>{target.callId}</dd>
          <dt>Method</dt>
          <dd class="strong">{target.method}</dd>
          <dt>{props.extra?.label ?? 'Worker'}</dt>
          <dd class="mono">{props.extra?.value ?? target.worker ?? '–'}</dd>
        </dl>
        <p class="help">{props.help ?? 'Its caller gets -32003 Cancelled; a running handler is told to stop.'}</p>
        <div class="send-row">
          <button type="button" ref={keep} onClick={props.onClose}>{props.keepLabel ?? 'Keep it running'}</button>
          <button type="button" class="danger" disabled={props.disabled} onClick={() => props.onConfirm(target.callId)}>Cancel call {target.callId}</button>
        </div>
      </div>
    </div>
  );
}
