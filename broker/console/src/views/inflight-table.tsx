// In flight's table: sortable columns (aria-sort), a header that stays in view, rows windowed to
// the viewport (window-rows.ts), a checkbox per row for bulk cancel, each id a link to its detail.
import { Component } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { duration, relative, shortId } from '../format';
import type { Row, Sort, SortKey } from '../inflight-rows';
import { callHref } from '../route';
import { useRowWindow } from '../window-rows';
import { Badge, ProgressBar } from './common';

interface Column {
  readonly key: SortKey;
  readonly label: string;
  readonly class?: string;
}

const columns: readonly Column[] = [
  { key: 'id', label: 'Call id' },
  { key: 'method', label: 'Method' },
  { key: 'service', label: 'Service', class: 'col-service' },
  { key: 'worker', label: 'Worker', class: 'col-worker' },
  { key: 'attempt', label: 'Attempt', class: 'num col-attempt' },
  { key: 'age', label: 'Age', class: 'num' },
  { key: 'deadline', label: 'Deadline', class: 'num' },
  { key: 'progress', label: 'Progress', class: 'wide' },
];

export interface InflightTableProps {
  readonly rows: readonly Row[];
  /** The feed's time of the picture shown: ages and deadlines count from it. */
  readonly at: number;
  readonly sort: Sort;
  readonly onSort: (key: SortKey) => void;
  readonly selected: ReadonlySet<string>;
  readonly onSelect: (callIds: readonly string[], on: boolean) => void;
  /** Old news (the feed is down): rows dim, ages stop, actions are off. */
  readonly stale: boolean;
  readonly onCancel: (row: Row) => void;
}

export function InflightTable(props: InflightTableProps) {
  const { rows, sort, stale } = props;
  const win = useRowWindow(rows.length);
  const head = useStickyHead();
  const allSelected = rows.length > 0 && rows.every((r) => props.selected.has(r.callId));
  return (
    <div class="table-wrap inflight-wrap">
      <table class={`grid inflight${stale ? ' stale' : ''}`} aria-label="Calls in flight" aria-rowcount={rows.length + 1} data-rows={rows.length} data-stale={stale ? 'true' : undefined}>
        <colgroup>
          <col class="w-select" /><col class="w-id" /><col /><col class="w-service col-service" /><col class="w-worker col-worker" /><col class="w-attempt col-attempt" /><col class="w-age" /><col class="w-deadline" /><col class="w-progress" /><col class="w-actions" />
        </colgroup>
        <thead ref={head}>
          <tr>
            <th scope="col" class="select-cell">
              <input type="checkbox" aria-label={`Select all ${rows.length} listed calls`} checked={allSelected} disabled={stale} onChange={(e) => props.onSelect(rows.map((r) => r.callId), (e.target as HTMLInputElement).checked)} />
            </th>
            {columns.map((c) => (
              <th key={c.key} scope="col" class={c.class} aria-sort={sort.key === c.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
                <button type="button" class="sort" data-sort={c.key} onClick={() => props.onSort(c.key)}>
                  {c.label}
                  <span aria-hidden="true" class="sort-mark">{sort.key === c.key ? (sort.dir === 'asc' ? '▲' : '▼') : ''}</span>
                </button>
              </th>
            ))}
            <th scope="col"><span class="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody ref={win.body}>
          {win.above > 0 ? <tr aria-hidden="true" class="spacer" style={{ height: `${win.above}px` }} /> : null}
          {rows.slice(win.start, win.end).map((r, i) => (
            <InflightRow key={r.callId} row={r} index={win.start + i + 2} selected={props.selected.has(r.callId)} stale={stale}
              age={r.startedAt ? `${stale ? '≥ ' : ''}${age(props.at - r.startedAt)}` : '–'}
              deadline={r.deadline ? (stale ? '?' : relative(Math.round((r.deadline - props.at) / 1000) * 1000)) : '–'}
              retry={r.state === 'retrying' && r.nextTryAt && !stale ? relative(Math.round((r.nextTryAt - props.at) / 1000) * 1000) : ''}
              onSelect={props.onSelect} onCancel={props.onCancel} />
          ))}
          {win.below > 0 ? <tr aria-hidden="true" class="spacer" style={{ height: `${win.below}px` }} /> : null}
        </tbody>
      </table>
    </div>
  );
}

/** Ages in whole seconds: a row's text changes once a second, not on every tick of the feed. */
function age(ms: number): string {
  return ms < 60_000 ? `${Math.max(0, Math.floor(ms / 1000))} s` : duration(Math.floor(ms / 1000) * 1000);
}

interface RowProps {
  readonly row: Row;
  readonly index: number;
  readonly selected: boolean;
  readonly stale: boolean;
  readonly age: string;
  readonly deadline: string;
  readonly retry: string;
  readonly onSelect: (callIds: readonly string[], on: boolean) => void;
  readonly onCancel: (row: Row) => void;
}

/**
 * One row, redrawn only when what it shows changed: the feed's deltas keep an unchanged call's
 * object (inflight-mirror.ts), and ages move once a second, so most ticks redraw a few rows.
 */
class InflightRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const p = this.props;
    return p.row !== next.row || p.index !== next.index || p.selected !== next.selected || p.stale !== next.stale || p.age !== next.age || p.deadline !== next.deadline || p.retry !== next.retry;
  }

  override render() {
    const { row: r, stale } = this.props;
    const staleTitle = stale ? 'Not counting: the feed is down' : undefined;
    return (
      <tr data-call-id={r.callId} aria-rowindex={this.props.index} aria-selected={this.props.selected}>
        <td class="select-cell">
          <input type="checkbox" aria-label={`Select ${r.method} ${r.callId}`} checked={this.props.selected} disabled={stale} onChange={(e) => this.props.onSelect([r.callId], (e.target as HTMLInputElement).checked)} />
        </td>
        <td class="mono" title={r.callId}><a href={callHref(r.callId)} data-call-link>{shortId(r.callId)}</a></td>
        <td class="strong">
          {r.method}
          {/* Service and worker under the method when the page is too narrow for their columns. */}
          <span class="narrow-only muted small-text">{[r.service, r.worker ?? r.state].filter(Boolean).join(' · ')}</span>
        </td>
        <td class="col-service">{r.service || <span class="muted">–</span>}</td>
        <td class="mono col-worker">{r.worker || <span class="muted">{r.state ?? '–'}</span>}</td>
        <td class="num col-attempt">
          {/* In a span of its own, so the badge after it is not a first child (which loses its margin). */}
          <span>{r.attempt ?? '–'}</span>
          {r.state === 'retrying' ? <Badge kind="retrying">retry {this.props.retry}</Badge> : null}
        </td>
        <td class="num" title={staleTitle}>{this.props.age}</td>
        <td class="num" title={staleTitle}>{this.props.deadline}</td>
        <td class="wide">
          <ProgressBar fraction={r.progress?.fraction} message={r.progress?.message} label={`Progress of ${r.method} ${r.callId}`} />
        </td>
        <td class="actions-cell">
          {r.cancelRequested ? <Badge kind="cancelled">cancel asked</Badge> : null}
          <button type="button" class="danger small" disabled={stale} onClick={() => this.props.onCancel(r)} aria-label={`Cancel ${r.method} ${r.callId}`}>Cancel</button>
        </td>
      </tr>
    );
  }
}

/** Keeps the header just under the page's own sticky bar, whose height changes as it wraps at narrow widths. */
function useStickyHead(): { current: HTMLTableSectionElement | null } {
  const head = useRef<HTMLTableSectionElement>(null);
  useLayoutEffect(() => {
    const bar = document.querySelector<HTMLElement>('header.top');
    if (!bar) return undefined;
    const place = (): void => head.current?.style.setProperty('--sticky-top', `${bar.offsetHeight}px`);
    place();
    const watch = new ResizeObserver(place);
    watch.observe(bar);
    return () => watch.disconnect();
  }, []);
  return head;
}
