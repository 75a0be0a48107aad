// Deep links: where the page is, as a URL hash any operator can paste. One module owns the format so
// every view builds its links the same way and main.tsx reads them back.
//
//   #/inflight?method=calc.add&sort=age      a view with its filters (a view's own query keys)
//   #/calls/<callId>                          one call's detail
//   #/services/<name>  #/workers/<instance>   one service, one worker instance
//   #/dead-letters/<service>/<messageId>      one dead letter (the path is the view's `path`)
//
// Older links (`#inflight`) still open their view.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  /** The view: the first path segment (`inflight`, `calls`, …). */
  readonly view: string;
  /** The rest of the path, decoded segment by segment (a call id, a service and a message id, …). */
  readonly path: readonly string[];
  /** The view's filters and sort, as written in the link. */
  readonly query: Readonly<Record<string, string>>;
}

/** Reads a hash (`location.hash`) into a route; an empty or unknown one gives `fallback`'s view. */
export function parseRoute(hash: string, fallback = 'services'): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [pathPart = '', queryPart = ''] = raw.split('?', 2);
  const segments = pathPart.split('/').filter((s) => s !== '').map(safeDecode);
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(queryPart)) query[k] = v;
  const [view = fallback, ...path] = segments;
  return { view, path, query };
}

/** The hash for a route: `href('calls', ['abc'])` → `#/calls/abc`; empty query values are left out. */
export function href(view: string, path: readonly string[] = [], query: Readonly<Record<string, string | undefined>> = {}): string {
  const segments = [view, ...path].map((s) => encodeURIComponent(s)).join('/');
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, v);
  const qs = q.toString();
  return `#/${segments}${qs === '' ? '' : `?${qs}`}`;
}

/** A call's detail link, the one every row and id in the console points to. */
export function callHref(callId: string): string {
  return href('calls', [callId]);
}

/** The current route, following hash changes (back/forward, pasted links, clicked links). */
export function useRoute(fallback = 'services'): Route {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash, fallback));
  useEffect(() => {
    const onHash = (): void => setRoute(parseRoute(location.hash, fallback));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, [fallback]);
  return route;
}

/**
 * Writes a view's filters into the link without adding a history entry per keystroke, so a filtered
 * view can be copied and shared as it is.
 */
export function replaceQuery(route: Route, query: Readonly<Record<string, string | undefined>>): void {
  const next = href(route.view, route.path, { ...route.query, ...query });
  if (next !== location.hash) history.replaceState(null, '', next);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
