// Turns what the runtime knows of a settled request into the observer's
// SettledRequest: the outcome word, the error code of the answer, the
// handler time and the queue wait. Only called when there is an observer.
import type { ResponseMessage } from '@warren/jsonrpc';
import type { TrackedOutcome } from '@warren/calls';
import type { DeliveryInfo } from '../wire/delivery';
import type { RequestOutcome, ServiceObserver, SettledRequest } from './service-observer';

/** A request settled without running (`expired`, unservable) or after the tracker's run. */
export type Settled =
  | { readonly method: string; readonly outcome: 'expired' }
  | { readonly method: string; readonly outcome: 'error' | 'dead_lettered'; readonly reply: ResponseMessage }
  | { readonly method: string; readonly outcome: TrackedOutcome };

export function observeSettled(observer: ServiceObserver, settled: Settled, info: DeliveryInfo, startedAt: number): void {
  const base = { method: settled.method, ...(info.sentAt === undefined ? {} : { queueWaitSeconds: Math.max(0, startedAt - info.sentAt) / 1000 }) };
  let request: SettledRequest;
  if (settled.outcome === 'expired') request = { ...base, outcome: 'expired' };
  else if (settled.outcome === 'error' || settled.outcome === 'dead_lettered') request = { ...base, outcome: settled.outcome, ...codeOf(settled.reply) };
  else {
    const outcome = settled.outcome;
    const code = outcome.reply === undefined ? undefined : errorCodeIn(outcome.reply);
    request = {
      ...base,
      outcome: outcomeWord(outcome, code),
      ...(code === undefined ? {} : { code }),
      ...(outcome.source === 'run' ? { handlerSeconds: (Date.now() - startedAt) / 1000 } : {}),
    };
  }
  try {
    observer.settled(request);
  } catch {
    // An observer is told, never obeyed: its failure must not touch the delivery.
  }
}

function outcomeWord(outcome: TrackedOutcome, code: number | undefined): RequestOutcome {
  switch (outcome.settle.action) {
    case 'dead-letter':
      return 'dead_lettered';
    case 'retry':
      return 'retried';
    case 'requeue':
      return 'requeued';
    case 'ack':
      return outcome.source === 'store' ? 'from_store' : code === undefined ? 'ok' : 'error';
  }
}

function codeOf(reply: ResponseMessage): { code?: number } {
  return 'error' in reply ? { code: reply.error.code } : {};
}

/** The error code of a single reply's JSON text; undefined for a result or a batch. Parses only text that can hold an error. */
export function errorCodeIn(text: string): number | undefined {
  if (!text.includes('"error"')) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !('error' in parsed)) return undefined;
    const error = parsed.error;
    return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number' ? error.code : undefined;
  } catch {
    return undefined;
  }
}
