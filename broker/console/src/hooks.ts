import { useEffect, useState } from 'preact/hooks';
import { call, getJson } from './api';
import type { DiscoverDocument, ServicesResponse } from './types';

export type Loaded<T> = { readonly state: 'loading' } | { readonly state: 'ok'; readonly value: T; readonly at: number } | { readonly state: 'error'; readonly error: string };

/** GET /services, again whenever the catalogue changes and every `everyMs` (queue depths move on their own). */
export function useServices(version: number, everyMs = 5000): Loaded<ServicesResponse> {
  const [loaded, setLoaded] = useState<Loaded<ServicesResponse>>({ state: 'loading' });
  useEffect(() => {
    const stop = new AbortController();
    const load = (): void => {
      getJson<ServicesResponse>('/services', stop.signal)
        .then((value) => setLoaded({ state: 'ok', value, at: Date.now() }))
        .catch((err: unknown) => {
          if (!stop.signal.aborted) setLoaded({ state: 'error', error: err instanceof Error ? err.message : String(err) });
        });
    };
    load();
    const timer = setInterval(load, everyMs);
    return () => {
      stop.abort();
      clearInterval(timer);
    };
  }, [version, everyMs]);
  return loaded;
}

/** rpc.discover's document (method schemas), again whenever the catalogue changes. */
export function useDiscover(version: number): Loaded<DiscoverDocument> {
  const [loaded, setLoaded] = useState<Loaded<DiscoverDocument>>({ state: 'loading' });
  useEffect(() => {
    let live = true;
    call<DiscoverDocument>('rpc.discover')
      .then((value) => live && setLoaded({ state: 'ok', value, at: Date.now() }))
      .catch((err: unknown) => live && setLoaded({ state: 'error', error: err instanceof Error ? err.message : String(err) }));
    return () => {
      live = false;
    };
  }, [version]);
  return loaded;
}
