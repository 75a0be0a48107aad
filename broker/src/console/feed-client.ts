import type { ServerResponse } from 'node:http';
import type { FeedEvents, InflightHead } from './feed-events';
import type { KeyedChanges } from './inflight-delta';

/** Bytes of call JSON one `inflight`/`inflight-delta` frame carries at most (a single call larger than this still goes, alone). */
export const defaultChunkBytes = 64 * 1024;

/** One server-sent event, typed by its name (feed-events.ts: the console reads the same types). */
export function frame<E extends keyof FeedEvents>(event: E, data: FeedEvents[E]): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A list's changes still to send to one browser: the latest JSON of each call changed (or null: gone), by id. */
type Pending = Map<string, string | null>;

/**
 * One browser's stream. The calls in flight are not written as they come: each tick's changes are
 * merged into `pending` (one entry per call, so a call whose progress moved five times while the
 * browser was slow is sent once, as it is now), and written in frames of at most `chunkBytes` while
 * the socket takes them; when it does not (`write` answered false), the rest waits for 'drain'.
 * So the whole list is never one write, a slow browser gets fewer, fuller updates rather than a
 * growing buffer, and its memory here is bounded by the number of calls, not by time.
 *
 * Small events (outcomes, throughput, catalogue, keep-alive) are written at once. A browser that
 * stopped reading is cut (it reconnects to a fresh list) once they pile up past `maxBufferedBytes`,
 * or once its socket has not drained for `stallMs`.
 */
export class FeedClient {
  /** Whether the first (`inflight`) frame went; every frame after it is an `inflight-delta`. */
  private seeded = false;
  private readonly calls: Pending = new Map();
  private readonly gateway: Pending = new Map();
  private head: InflightHead | undefined;
  /** This tick's head is still to be sent (even with nothing changed: the page learns the feed is live). */
  private headDue = false;
  private waitingForDrain = false;
  private waitingSince = 0;

  constructor(private readonly response: ServerResponse, private readonly limits: { readonly maxBufferedBytes: number; readonly stallMs: number; readonly chunkBytes?: number }) {}

  get buffered(): number {
    return this.response.writableLength;
  }

  /** Whether it has not yet been given a whole list (its next changes must be the whole list). */
  get fresh(): boolean {
    return !this.seeded && this.head === undefined;
  }

  send<E extends keyof FeedEvents>(event: E, data: FeedEvents[E]): boolean {
    return this.write(frame(event, data));
  }

  comment(): void {
    this.write(': keep-alive\n\n');
  }

  /**
   * Takes a tick's in-flight changes (for a fresh client: the whole list as upserts) and writes what
   * the socket takes. False when the client is gone or cut.
   */
  queueInflight(head: InflightHead, calls: KeyedChanges, gateway: KeyedChanges): boolean {
    if (this.waitingForDrain && Date.now() - this.waitingSince > this.limits.stallMs) {
      this.response.destroy();
      return false;
    }
    merge(this.calls, calls);
    merge(this.gateway, gateway);
    this.head = head;
    this.headDue = true;
    return this.flush();
  }

  /** Writes a frame; false (and the stream is cut) when the browser already left too much unread. */
  write(text: string): boolean {
    if (this.response.destroyed) return false;
    if (this.response.writableLength > this.limits.maxBufferedBytes) {
      this.response.destroy();
      return false;
    }
    if (!this.response.write(text)) this.awaitDrain();
    return true;
  }

  end(): void {
    if (!this.response.destroyed) this.response.end();
  }

  private flush(): boolean {
    while (!this.waitingForDrain && this.head !== undefined && (this.headDue || this.calls.size > 0 || this.gateway.size > 0)) {
      const budget = this.limits.chunkBytes ?? defaultChunkBytes;
      const calls = take(this.calls, budget);
      const gateway = take(this.gateway, budget - calls.bytes);
      const more = this.calls.size > 0 || this.gateway.size > 0;
      const text = this.seeded ? deltaFrame(this.head, calls, gateway, more) : seedFrame(this.head, calls, gateway, more);
      this.seeded = true;
      this.headDue = false;
      if (!this.write(text)) return false;
    }
    return !this.response.destroyed;
  }

  private awaitDrain(): void {
    if (this.waitingForDrain) return;
    this.waitingForDrain = true;
    this.waitingSince = Date.now();
    this.response.once('drain', () => {
      this.waitingForDrain = false;
      this.flush();
    });
  }
}

function merge(into: Pending, changes: KeyedChanges): void {
  for (const id of changes.remove) into.set(id, null);
  for (const [id, json] of changes.upsert) into.set(id, json);
}

interface Chunk {
  readonly upsert: string[];
  readonly remove: string[];
  readonly bytes: number;
}

/** Takes entries off `pending` (oldest first) up to `budget` bytes, at least one when any is left and the budget is not spent. */
function take(pending: Pending, budget: number): Chunk {
  const upsert: string[] = [];
  const remove: string[] = [];
  let bytes = 0;
  if (budget <= 0) return { upsert, remove, bytes };
  for (const [id, json] of pending) {
    const size = json === null ? id.length + 3 : json.length + 1;
    if (bytes > 0 && bytes + size > budget) break;
    pending.delete(id);
    if (json === null) remove.push(id);
    else upsert.push(json);
    bytes += size;
  }
  return { upsert, remove, bytes };
}

// The two frames below are built from each call's JSON as the diff already serialized it (once per
// tick, for every browser) rather than by serializing the calls again; their shapes are
// InflightEvent and InflightDeltaEvent (feed-events.ts).

function headJson(head: InflightHead, more: boolean): string {
  return JSON.stringify({ ...head, ...(more ? { more: true } : {}) }).slice(1, -1);
}

function seedFrame(head: InflightHead, calls: Chunk, gateway: Chunk, more: boolean): string {
  return `event: inflight\ndata: {${headJson(head, more)},"calls":[${calls.upsert.join(',')}],"gateway":[${gateway.upsert.join(',')}]}\n\n`;
}

function deltaFrame(head: InflightHead, calls: Chunk, gateway: Chunk, more: boolean): string {
  const list = (c: Chunk): string => `{"upsert":[${c.upsert.join(',')}],"remove":${JSON.stringify(c.remove)}}`;
  return `event: inflight-delta\ndata: {${headJson(head, more)},"calls":${list(calls)},"gateway":${list(gateway)}}\n\n`;
}
