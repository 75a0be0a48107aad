import { useEffect, useState } from 'preact/hooks';
import { call, getJson, rpc, type RpcError } from './api';
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

/** A list read by a JSON-RPC method: loading, its result, or the method's error. */
export type Listing<T> = { readonly state: 'loading' } | { readonly state: 'ok'; readonly value: T } | { readonly state: 'error'; readonly error: RpcError };

/**
 * Calls `method` now, every `everyMs`, whenever `deps` change and on `refresh()`; `now` is when the
 * last answer came (what "in 3 s" and "5 s ago" are counted from). A broker that does not answer
 * shows as error -32603.
 *
 * @example const { listing, now, refresh } = usePolledRpc<{ calls: DelayedCall[] }>('delayed.list', { limit: 100 }, 5000, [version]);
 */
export function usePolledRpc<T>(method: string, params: unknown, everyMs: number, deps: readonly unknown[] = []): { listing: Listing<T>; now: number; refresh: () => void } {
  const [listing, setListing] = useState<Listing<T>>({ state: 'loading' });
  const [now, setNow] = useState(Date.now());
  const [reload, setReload] = useState(0);
  useEffect(() => {
    let current = true;
    const read = (): void => {
      void rpc(method, params).then((a) => {
        if (!current) return;
        setNow(Date.now());
        setListing(a.ok ? { state: 'ok', value: a.result as T } : { state: 'error', error: a.error });
      }, () => current && setListing({ state: 'error', error: { code: -32603, message: 'the broker did not answer' } }));
    };
    read();
    const timer = setInterval(read, everyMs);
    return () => {
      current = false;
      clearInterval(timer);
    };
    // `params` is read afresh when `deps` change (the callers name what their params depend on).
  }, [reload, method, everyMs, ...deps]);
  return { listing, now, refresh: () => setReload((r) => r + 1) };
}
