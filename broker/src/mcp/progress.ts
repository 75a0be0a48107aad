import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Progress, ProgressListener } from '@warren/amqp';

/**
 * Turns a worker's progress reports (ctx.progress) into MCP `notifications/progress` for the
 * `progressToken` a tools/call carried: `progress` is the fraction as a percentage of `total` 100,
 * never going back (MCP requires it to increase), with the handler's message. Undefined when the
 * client sent no token. A notification that cannot be sent (session gone) is dropped.
 */
export function progressNotifier(token: unknown, send: (notification: ServerNotification) => Promise<void>): ProgressNotifier | undefined {
  if (typeof token !== 'string' && typeof token !== 'number') return undefined;
  let last = -1;
  let sending: Promise<void> = Promise.resolve();
  return {
    listener: (p: Progress) => {
      const progress = Math.round(p.fraction * 1000) / 10;
      if (progress <= last) return;
      last = progress;
      const params = { progressToken: token, progress, total: 100, ...(p.message === undefined ? {} : { message: p.message }) };
      sending = sending.then(() => send({ method: 'notifications/progress', params })).catch(() => undefined);
    },
    // The SDK client handles a notification a microtask later than a response, and forgets the
    // request's progress handler with its response: a last notification that reaches it in the same
    // read as the result is dropped (seen over SSE; a turn of the event loop was not enough). A
    // short pause, only for calls that reported progress, lets it arrive alone.
    sent: () => (last < 0 ? sending : sending.then(() => new Promise<void>((resolve) => setTimeout(resolve, lastNotificationGapMs)))),
  };
}

/** Pause between a call's last progress notification and its result (see `sent`). */
export const lastNotificationGapMs = 50;

export interface ProgressNotifier {
  readonly listener: ProgressListener;
  /** Resolves once every notification so far is sent: the tool's result must not overtake them. */
  sent(): Promise<void>;
}
