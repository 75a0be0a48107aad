import type { HistoryBounds, HistoryKind } from './keys';
import type { HistoryEntry } from './store-port';
import { compareIds, idMs } from './stream-ids';

/**
 * The history streams in memory (embedded mode), as the finish script keeps them in Redis
 * (history-script.ts): entries `<ms>-<seq>`, bounded in entries and age, read newest first.
 */
export class MemoryHistory {
  private readonly streams: Record<HistoryKind, HistoryEntry[]> = { done: [], failed: [] };
  private lastMs = 0;
  private seq = 0;

  constructor(private readonly bounds: HistoryBounds | false) {}

  /** Adds a finished record (a success without its result, as the script stores it). */
  add(callId: string, record: string, state: string, result: string, maxErrorBytes: number, now: number): void {
    if (this.bounds === false) return;
    const kind: HistoryKind = state === 'D' ? 'done' : 'failed';
    const stream = this.streams[kind];
    this.seq = now === this.lastMs ? this.seq + 1 : 0;
    this.lastMs = Math.max(now, this.lastMs);
    stream.push([`${this.lastMs}-${this.seq}`, callId, kind === 'failed' && result.length <= maxErrorBytes ? record + result : record]);
    const { entries, ageMs } = this.bounds[kind];
    let drop = Math.max(0, stream.length - entries);
    while (drop < stream.length && idMs((stream[drop] as HistoryEntry)[0]) < now - ageMs) drop++;
    if (drop > 0) stream.splice(0, drop);
  }

  /** Adds an entry as given (historyAdd: whoever saw the call end built its record). */
  addEntry(kind: HistoryKind, callId: string, record: string, now: number): void {
    if (this.bounds === false) return;
    this.add(callId, record, kind === 'done' ? 'D' : 'F', '', 0, now);
  }

  /** As `XREVRANGE stream (before since COUNT count`. */
  range(kind: HistoryKind, before: string | undefined, since: number, count: number): HistoryEntry[] {
    const out: HistoryEntry[] = [];
    const stream = this.streams[kind];
    for (let i = stream.length - 1; i >= 0 && out.length < count; i--) {
      const entry = stream[i] as HistoryEntry;
      if (before !== undefined && compareIds(entry[0], before) >= 0) continue;
      if (idMs(entry[0]) < since) break;
      out.push(entry);
    }
    return out;
  }
}
