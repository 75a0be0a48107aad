import { useEffect, useRef } from 'preact/hooks';

/** The keyboard help (`?`). */
export function Help(props: { views: readonly { readonly key: string; readonly label: string }[]; onClose: () => void }) {
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => close.current?.focus(), []);
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="help-title" onClick={props.onClose}>
      <div class="dialog" onClick={(e) => e.stopPropagation()}>
        <h2 id="help-title">Keyboard</h2>
        <dl class="keys">
          {props.views.map((v) => (
            <>
              <dt><kbd>{v.key}</kbd></dt>
              <dd>{v.label}</dd>
            </>
          ))}
          <dt><kbd>/</kbd></dt>
          <dd>Filter the current table</dd>
          <dt><kbd>Ctrl</kbd>+<kbd>Enter</kbd></dt>
          <dd>Send the call (Console view)</dd>
          <dt><kbd>Esc</kbd></dt>
          <dd>Leave a field, close a dialog</dd>
        </dl>
        <button type="button" ref={close} onClick={props.onClose}>Close</button>
      </div>
    </div>
  );
}
