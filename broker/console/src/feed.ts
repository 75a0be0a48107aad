// The live feed: server-sent events read through fetch (EventSource cannot send
// a bearer token), reconnecting with backoff; one stream per tab.
import { authHeaders, refusedToken, reportUnauthorized } from './api';

export type FeedState = 'connecting' | 'live' | 'down' | 'unauthorized';

export function openFeed(onEvent: (event: string, data: unknown) => void, onState: (state: FeedState) => void): () => void {
  const stop = new AbortController();
  let delay = 500;
  void (async () => {
    while (!stop.signal.aborted) {
      onState('connecting');
      try {
        const response = await fetch('/console/events', { headers: { accept: 'text/event-stream', ...authHeaders() }, signal: stop.signal, cache: 'no-store' });
        if (response.status === 401) {
          onState('unauthorized');
          reportUnauthorized(refusedToken());
          return;
        }
        // A valid token that is not an operator's: the feed shows every call, which it may not see.
        if (response.status === 403 && (await refusalReason(response)) === 'operator_token_required') {
          onState('unauthorized');
          reportUnauthorized('not-operator');
          return;
        }
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        onState('live');
        delay = 500;
        await read(response.body, onEvent);
      } catch {
        if (stop.signal.aborted) return;
      }
      onState('down');
      await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay));
      delay = Math.min(delay * 2, 8000);
    }
  })();
  return () => stop.abort();
}

async function refusalReason(response: Response): Promise<unknown> {
  try {
    return ((await response.json()) as { error?: { data?: { reason?: unknown } } }).error?.data?.reason;
  } catch {
    return undefined;
  }
}

async function read(body: ReadableStream<Uint8Array>, onEvent: (event: string, data: unknown) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) onEvent(event, JSON.parse(data.join('\n')));
    }
  }
}
