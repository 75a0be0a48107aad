/**
 * Runs `work`, turning a synchronous throw into a rejection, as an async function would. The
 * tracker's hot path chains promises instead of using async functions (one promise per step, not
 * per layer), so a store call that throws synchronously must still end in the `catch` of its chain.
 */
export function attempt<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (err) {
    return Promise.reject(err);
  }
}
