/**
 * A read whose calls are shared: calls made while one read runs wait for
 * that one, and its value is reused for `maxAgeMs` after it settles (0: only
 * while it runs). A failed read is not kept: its waiters get the error, and
 * the next call reads again. So however many HTTP clients poll one endpoint,
 * the store behind it sees one read at a time.
 *
 * @example
 * const list = sharedRead(() => view.list()); // 100 concurrent GET /inflight: one cluster read
 */
export function sharedRead<T>(read: () => Promise<T>, maxAgeMs = 0, now: () => number = () => performance.now()): () => Promise<T> {
  let running: Promise<T> | undefined;
  let last: { value: T; at: number } | undefined;
  return () => {
    if (last && now() - last.at < maxAgeMs) return Promise.resolve(last.value);
    running ??= read().then(
      (value) => {
        last = { value, at: now() };
        running = undefined;
        return value;
      },
      (err: unknown) => {
        running = undefined;
        throw err;
      },
    );
    return running;
  };
}
