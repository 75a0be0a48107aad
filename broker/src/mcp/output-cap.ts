import { once } from 'node:events';
import type { ServerResponse } from 'node:http';

/**
 * Bounds what a response may hold for a client that does not read it. Node
 * buffers every `write()` a slow or stalled reader cannot take yet
 * (`writableLength`: the response's own buffer and its socket's); an SSE
 * stream nobody reads would grow without end. Past `maxBytes` the response
 * is destroyed at the next write (the connection cut, the buffers freed)
 * and `onOverflow` told, once.
 *
 * Wraps `res.write` so it also bounds writers we do not control (the MCP
 * SDK's Streamable HTTP transport writes its event streams itself).
 *
 * @example
 * capOutput(reply.raw, 4 * 1024 * 1024, (queued) => log.warn({ queued }, 'client not reading; session ended'));
 */
export function capOutput(res: ServerResponse, maxBytes: number, onOverflow: (queuedBytes: number) => void, onWritten?: (bytes: number) => void): void {
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  let tripped = false;
  res.write = ((...args: unknown[]): boolean => {
    if (tripped || res.destroyed) return false;
    const chunk = args[0];
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.byteLength : 0;
    // Judged on what is still queued from earlier writes, so one large message to a client that
    // reads is never refused; memory is bounded by maxBytes plus one message.
    if (res.writableLength > maxBytes) {
      tripped = true;
      const queued = res.writableLength + size;
      res.destroy();
      onOverflow(queued);
      return false;
    }
    onWritten?.(size);
    return write(...args);
  }) as ServerResponse['write'];
}

/**
 * Resolves when `res` can take more (its buffer drained), or it closed. What
 * writers await after `write()` returned false, so they go at the reader's
 * pace instead of queueing.
 */
export function drained(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return Promise.resolve();
  // One wait per response, however many writers wait on it (concurrent tool results on one stream):
  // one set of listeners instead of three per writer.
  let waiting = drains.get(res);
  if (!waiting) {
    waiting = drainOrClose(res).finally(() => drains.delete(res));
    drains.set(res, waiting);
  }
  return waiting;
}

const drains = new WeakMap<ServerResponse, Promise<void>>();

async function drainOrClose(res: ServerResponse): Promise<void> {
  const ac = new AbortController();
  try {
    await Promise.race([once(res, 'drain', { signal: ac.signal }), once(res, 'close', { signal: ac.signal })]);
  } catch {
    // Aborted below, or the response errored: either way there is nothing to wait for.
  } finally {
    ac.abort();
  }
}
