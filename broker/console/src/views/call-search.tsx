// The header's search by call id: a pasted id (or a whole link to one) opens that call's detail.
import { useState } from 'preact/hooks';
import { callHref, parseRoute } from '../route';

/** The call id in what was pasted: a bare id, or a console link whose hash is `#/calls/<id>`. */
export function callIdIn(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const hash = t.indexOf('#');
  if (hash >= 0) {
    const route = parseRoute(t.slice(hash));
    return route.view === 'calls' ? route.path[0] : undefined;
  }
  return /\s/.test(t) ? undefined : t;
}

export function CallSearch() {
  const [value, setValue] = useState('');
  const [bad, setBad] = useState(false);
  return (
    <form
      class="call-search"
      role="search"
      aria-label="Open a call by id"
      onSubmit={(e) => {
        e.preventDefault();
        const id = callIdIn(value);
        setBad(id === undefined);
        if (id === undefined) return;
        setValue('');
        location.hash = callHref(id);
      }}
    >
      <input
        type="search"
        name="callId"
        placeholder="Call id…"
        aria-label="Call id"
        aria-invalid={bad ? 'true' : undefined}
        title={bad ? 'Paste a call id (no spaces) or a link to one' : 'Paste a call id and press Enter'}
        value={value}
        onInput={(e) => {
          setValue((e.target as HTMLInputElement).value);
          setBad(false);
        }}
      />
    </form>
  );
}
