// In flight's counts grouped by method, worker or state: where the load is at a glance. A method's
// count narrows the table to it, and offers to cancel all of that method's calls (confirmed).
import { countBy, groupKinds, type GroupBy, type Row } from '../inflight-rows';

export interface InflightGroupsProps {
  readonly rows: readonly Row[];
  readonly by: GroupBy;
  readonly onBy: (by: GroupBy) => void;
  /** The method the table is narrowed to, if any. */
  readonly method: string | undefined;
  readonly onMethod: (method: string | undefined) => void;
  readonly onCancelMethod: (method: string) => void;
  readonly stale: boolean;
}

/** Groups shown at most; the rest are summed in one "more" line. */
const maxShown = 12;

export function InflightGroups(props: InflightGroupsProps) {
  const groups = countBy(props.rows, props.by);
  const shown = groups.slice(0, maxShown);
  const rest = groups.slice(maxShown).reduce((n, g) => n + g.count, 0);
  return (
    <section class="groups" aria-label={`Calls in flight by ${props.by}`} data-groups={props.by}>
      <label class="inline">
        Count by
        <select value={props.by} onChange={(e) => props.onBy((e.target as HTMLSelectElement).value as GroupBy)}>
          {groupKinds.map((k) => <option key={k} value={k}>{k}</option>)}
        </select>
      </label>
      <ul>
        {shown.map((g) => (
          <li key={g.key} data-group={g.key} data-count={g.count} class={props.by === 'method' && props.method === g.key ? 'current' : undefined}>
            {props.by === 'method' ? (
              <button type="button" class="ghost small" aria-pressed={props.method === g.key} onClick={() => props.onMethod(props.method === g.key ? undefined : g.key)} title="Show only this method's calls">
                <span class="strong">{g.key}</span> <span class="group-count">{g.count}</span>
              </button>
            ) : (
              <span><span class="strong">{g.key}</span> <span class="group-count">{g.count}</span></span>
            )}
            {props.by === 'method' ? (
              <button type="button" class="danger small" disabled={props.stale} onClick={() => props.onCancelMethod(g.key)} aria-label={`Cancel all ${g.count} ${g.key} calls`}>Cancel all</button>
            ) : null}
          </li>
        ))}
        {rest > 0 ? <li class="muted">{groups.length - maxShown} more: {rest}</li> : null}
      </ul>
    </section>
  );
}
