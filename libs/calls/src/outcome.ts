import type { Executed, TrackedOutcome } from './tracker';

const ack = { action: 'ack' } as const;
const requeue = { action: 'requeue' } as const;

/**
 * The outcome of a run nobody tracked (no tracker, a batch, the store away):
 * reply with the answer, settle as it says, nothing to wait for. Trackers end
 * their runs with it too, adding `stored`, so both settle by the same rules.
 */
export function outcomeOf(executed: Executed): TrackedOutcome {
  switch (executed.kind) {
    case 'answer':
      return { reply: executed.text, settle: executed.deadLetter ? { action: 'dead-letter', ...executed.deadLetter } : ack, source: 'run' };
    case 'retry':
      return { reply: undefined, settle: { action: 'retry', delayMs: executed.delayMs, nextAttempt: executed.nextAttempt }, source: 'run' };
    case 'requeue':
      return { reply: undefined, settle: requeue, source: 'run' };
  }
}
