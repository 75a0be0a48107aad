/** What a tracker needs to stop a call: an AbortController has this shape, and so has the runtime's CallAbort. */
export interface Abortable {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}
