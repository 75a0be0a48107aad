// In flight's rows as data: which calls are listed, in what order, and how they count by method,
// worker or state. Pure (no Preact, no DOM), so the view stays a view and the rules are tested alone.
import type { ClusterCall, InflightEvent } from './types';

/** One row: a call of the cluster, or one the gateway relays that no worker has taken yet. */
export type Row = ClusterCall & { readonly source: 'cluster' | 'gateway' };

/** The columns a table can be sorted by (the `sort` of the deep link: `age`, `-age`, …). */
export const sortKeys = ['id', 'method', 'service', 'worker', 'attempt', 'age', 'deadline', 'progress'] as const;
export type SortKey = (typeof sortKeys)[number];

export interface Sort {
  readonly key: SortKey;
  readonly dir: 'asc' | 'desc';
}

/** Oldest first: the order the view always had, and where a link without `sort` opens. */
export const defaultSort: Sort = { key: 'age', dir: 'desc' };

/** Reads `sort` from a link: a key, `-` in front for descending; anything else is the default. */
export function parseSort(text: string | undefined): Sort {
  if (text === undefined || text === '') return defaultSort;
  const desc = text.startsWith('-');
  const key = desc ? text.slice(1) : text;
  return (sortKeys as readonly string[]).includes(key) ? { key: key as SortKey, dir: desc ? 'desc' : 'asc' } : defaultSort;
}

/** The link's form of a sort (the default is left out of the link). */
export function formatSort(sort: Sort): string | undefined {
  if (sort.key === defaultSort.key && sort.dir === defaultSort.dir) return undefined;
  return `${sort.dir === 'desc' ? '-' : ''}${sort.key}`;
}

/** A click on a column header: the same column turns its direction, another starts ascending (age: oldest first). */
export function nextSort(current: Sort, key: SortKey): Sort {
  if (current.key === key) return { key, dir: current.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: key === 'age' ? 'desc' : 'asc' };
}

/** What narrows the list: free text over id, method, service and worker, and an exact method. */
export interface RowFilter {
  readonly text: string;
  readonly method?: string | undefined;
}

/**
 * Each call's row, made once per call object: a call the feed did not change keeps its object
 * (inflight-mirror.ts), so it keeps its row too, and the table skips redrawing it.
 */
const made = new WeakMap<object, Row>();

function rowFor<T extends object>(from: T, make: (from: T) => Row): Row {
  let row = made.get(from);
  if (!row) made.set(from, (row = make(from)));
  return row;
}

/**
 * The cluster's calls, then the gateway's calls no worker has taken yet (or untracked ones) as "relaying".
 * A call waiting in RabbitMQ is `queued` in the cluster's list when its caller marks it (trackQueued):
 * one this gateway relays keeps the gateway's "relaying (via)", which says where it came from.
 */
export function rowsOf(event: InflightEvent): Row[] {
  const cluster = new Set(event.calls.map((c) => c.callId));
  const relayed = new Map(event.gateway.map((g) => [g.callId, g]));
  const rows: Row[] = event.calls.map((c) => {
    const g = c.state === 'queued' ? relayed.get(c.callId) : undefined;
    return g === undefined ? rowFor(c, (x): Row => ({ ...x, source: 'cluster' })) : rowFor(g, (x): Row => ({ ...c, state: `relaying (${x.via})`, source: 'gateway' }));
  });
  for (const g of event.gateway) {
    if (cluster.has(g.callId) || g.callId.startsWith('notification.')) continue;
    rows.push(rowFor(g, (x): Row => ({ callId: x.callId, method: x.method, startedAt: x.startedAt, state: `relaying (${x.via})`, source: 'gateway' })));
  }
  return rows;
}

export function filterRows(rows: readonly Row[], filter: RowFilter): Row[] {
  const text = filter.text.trim().toLowerCase();
  return rows.filter((r) => (filter.method === undefined || filter.method === '' || r.method === filter.method)
    && (text === '' || [r.callId, r.method, r.service, r.worker].some((f) => f !== undefined && f.toLowerCase().includes(text))));
}

/** A row's value in a column; undefined sorts last whatever the direction. */
function valueOf(r: Row, key: SortKey): string | number | undefined {
  switch (key) {
    case 'id': return r.callId;
    case 'method': return r.method;
    case 'service': return r.service || undefined;
    case 'worker': return r.worker || undefined;
    case 'attempt': return r.attempt;
    // Age sorts by start: the older call is the "larger" age.
    case 'age': return r.startedAt === undefined ? undefined : -r.startedAt;
    case 'deadline': return r.deadline || undefined;
    case 'progress': return r.progress?.fraction;
    default: {
      const never: never = key;
      return never;
    }
  }
}

/** Sorted by one column, ties broken by call id so rows with equal values keep their places between updates. */
export function sortRows(rows: readonly Row[], sort: Sort): Row[] {
  const sign = sort.dir === 'asc' ? 1 : -1;
  const keyed = rows.map((r) => ({ r, v: valueOf(r, sort.key) }));
  keyed.sort((a, b) => {
    if (a.v === undefined || b.v === undefined) {
      if (a.v !== b.v) return a.v === undefined ? 1 : -1;
    } else if (a.v !== b.v) {
      // Code-unit order for text, not the locale's: ids are opaque, and the order must not depend on the
      // browser's language (localeCompare put `ArL…` after `aJj…` and the sort test, in code-unit order, failed).
      return (typeof a.v === 'number' && typeof b.v === 'number' ? a.v - b.v : String(a.v) < String(b.v) ? -1 : 1) * sign;
    }
    return a.r.callId < b.r.callId ? -1 : a.r.callId > b.r.callId ? 1 : 0;
  });
  return keyed.map((k) => k.r);
}

export const groupKinds = ['method', 'worker', 'state'] as const;
export type GroupBy = (typeof groupKinds)[number];

export interface Group {
  readonly key: string;
  readonly count: number;
}

/** What a row counts under: a call without a worker yet counts under its state (`relaying (http)`, `retrying`). */
export function groupOf(r: Row, by: GroupBy): string {
  switch (by) {
    case 'method': return r.method;
    case 'worker': return r.worker || `(${r.state ?? 'none'})`;
    case 'state': return r.state ?? 'running';
    default: {
      const never: never = by;
      return never;
    }
  }
}

/** Counts of rows per group, largest first (then by name). */
export function countBy(rows: readonly Row[], by: GroupBy): Group[] {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const k = groupOf(r, by);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => ({ key, count })).sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
}
