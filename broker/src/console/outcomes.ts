import { ErrorCode } from '@warren/jsonrpc';

/** How a call ended. */
export type OutcomeState = 'done' | 'failed' | 'cancelled' | 'expired';

/** One finished call, as the Recent outcomes view shows it. */
export interface Outcome {
  readonly callId: string;
  readonly method: string;
  readonly service?: string;
  readonly worker?: string;
  readonly attempt?: number;
  readonly state: OutcomeState;
  /** The JSON-RPC error code, for calls that did not end `done`. */
  readonly code?: number;
  /** From the start of its (last) attempt, or from the gateway's publish, to its answer. */
  readonly durationMs?: number;
  /** ms since the epoch. */
  readonly endedAt: number;
  /** Who saw it end: the gateway relaying it (exact), or the in-flight watcher noticing it leave the store. */
  readonly seenBy: 'gateway' | 'watcher';
}

/** The outcome of an answer with this error code (undefined: a result). */
export function outcomeState(code: number | undefined): OutcomeState {
  if (code === undefined) return 'done';
  if (code === ErrorCode.Cancelled) return 'cancelled';
  if (code === ErrorCode.DeadlineExceeded) return 'expired';
  return 'failed';
}

/**
 * The last finished calls, newest last, bounded; a call is kept once even
 * when both the gateway and the watcher saw it end (the gateway's, exact,
 * wins when it comes first; the watcher's is dropped as a repeat).
 */
export class OutcomeLog {
  private readonly items: Outcome[] = [];
  private readonly ids = new Set<string>();

  constructor(private readonly max: number) {}

  /** Adds an outcome; false when the call is already in the log. */
  add(outcome: Outcome): boolean {
    if (this.ids.has(outcome.callId)) return false;
    this.items.push(outcome);
    this.ids.add(outcome.callId);
    while (this.items.length > this.max) {
      const dropped = this.items.shift();
      if (dropped) this.ids.delete(dropped.callId);
    }
    return true;
  }

  has(callId: string): boolean {
    return this.ids.has(callId);
  }

  /** The newest `n` (all by default), oldest first. */
  recent(n = this.max): Outcome[] {
    return this.items.slice(-n);
  }
}
