import type { ComponentChildren } from 'preact';
import type { Listing } from '../hooks';

export function Header(props: { title: string; children?: ComponentChildren; sub?: ComponentChildren }) {
  return (
    <div class="view-head">
      <div>
        <h1>{props.title}</h1>
        {props.sub ? <p class="sub">{props.sub}</p> : null}
      </div>
      <div class="actions">{props.children}</div>
    </div>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

export function Notice(props: { kind?: 'error' | 'info'; children: ComponentChildren }) {
  return <p class={`notice ${props.kind ?? 'info'}`} role={props.kind === 'error' ? 'alert' : 'status'}>{props.children}</p>;
}

export function Filter(props: { value: string; onInput: (v: string) => void; label: string }) {
  return (
    <input
      type="search"
      class="filter"
      data-filter
      placeholder="Filter…   /"
      aria-label={props.label}
      value={props.value}
      onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
    />
  );
}

export function Badge(props: { kind: string; children: ComponentChildren }) {
  return <span class={`badge badge-${props.kind}`}>{props.children}</span>;
}

export function ProgressBar(props: { fraction: number | undefined; message?: string | undefined; label: string }) {
  if (props.fraction === undefined) return <span class="muted">–</span>;
  const pct = Math.round(props.fraction * 100);
  return (
    <div class="progress-cell">
      <div class="bar" role="progressbar" aria-label={props.label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct} aria-valuetext={props.message ? `${pct}% ${props.message}` : `${pct}%`}>
        <div class="fill" style={{ width: `${pct}%` }} />
      </div>
      <span class="pct">{pct}%</span>
      {props.message ? <span class="progress-message" title={props.message}>{props.message}</span> : null}
    </div>
  );
}

export function matches(filter: string, ...fields: (string | number | undefined)[]): boolean {
  if (filter.trim() === '') return true;
  const f = filter.trim().toLowerCase();
  return fields.some((x) => x !== undefined && String(x).toLowerCase().includes(f));
}

/** A grid table: its label, its column heads (and, with `actions`, an unlabelled last column for buttons), its rows. */
export function GridTable(props: { label: string; columns: readonly string[]; actions?: boolean; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class="grid" aria-label={props.label}>
        <thead>
          <tr>
            {props.columns.map((c) => <th key={c} scope="col">{c}</th>)}
            {props.actions ? <th scope="col"><span class="sr-only">Actions</span></th> : null}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/**
 * What a list read by `method` shows instead of its rows: Loading, its error (`notServed` when the
 * broker does not serve the method, -32601), or `empty` when `isEmpty`; nothing once it has rows.
 */
export function ListingStatus<T>(props: { listing: Listing<T>; method: string; notServed: string; isEmpty: (value: T) => boolean; empty: ComponentChildren }) {
  const { listing } = props;
  if (listing.state === 'loading') return <Empty>Loading…</Empty>;
  if (listing.state === 'error') {
    return <Notice kind="error">{listing.error.code === -32601 ? props.notServed : `${props.method} failed: ${listing.error.message} (${listing.error.code})`}</Notice>;
  }
  return props.isEmpty(listing.value) ? <Empty>{props.empty}</Empty> : null;
}
