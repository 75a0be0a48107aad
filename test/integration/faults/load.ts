// A closed-loop load for the scenario tests: keeps `inflight` calls (and a
// trickle of confirmed notifications) outstanding until `total` calls were
// made, and records for each when it was made, its deadline, when and how it
// settled. A call still unsettled `hangMs` past its deadline is recorded as
// hung instead of hanging the test.
import type { RpcClient } from '@warren/amqp';
import { callWithRecovery, type InflightView } from '@warren/inflight';
import { wireErrorOf } from '@warren/jsonrpc';
import { waitFor } from '@warren/testkit';
import { noteMethod, workMethod, type WorkParams } from './rig';

/** How a call ended: 'ok', a JSON-RPC error code, or 'hung'/'other:<name>' for what must never happen. */
export type Outcome = 'ok' | number | 'hung' | `other:${string}`;

export interface CallRecord {
  readonly callId: string;
  readonly issuedAt: number;
  readonly deadline: number;
  settledAt: number | undefined;
  outcome: Outcome | undefined;
}

export interface NoteRecord {
  readonly id: string;
  outcome: Outcome | undefined;
}

export interface LoadOptions {
  readonly total: number;
  readonly inflight: number;
  /** Per call. @default 8000 */
  readonly timeoutMs?: number | ((i: number) => number);
  /** Params of call `i`. @default { ms: 20..80, n: i } */
  readonly params?: (i: number) => WorkParams;
  /** Publish a notification every this many calls (0: none). @default 10 */
  readonly notifyEvery?: number;
  /** How long past its deadline a call may stay unsettled before it counts as hung. @default 3000 */
  readonly hangMs?: number;
  /** Make calls with callWithRecovery through this view (a lost reply is fetched from the in-flight store by the deadline). */
  readonly recoverWith?: InflightView;
  /** Keep making calls past `total` until this settles (the load then spans a fault of unknown length). */
  readonly until?: Promise<unknown>;
}

/** A failed call's outcome is its wire code: a service's answer as it is, a local failure (RPC_*) by its wire form. */
function outcomeOf(err: unknown): Outcome {
  const wire = wireErrorOf(err);
  if (wire) return wire.code;
  return `other:${err instanceof Error ? err.name : typeof err}`;
}

export class Load {
  readonly calls: CallRecord[] = [];
  readonly notes: NoteRecord[] = [];
  private issued = 0;
  private settledCount = 0;
  readonly finished: Promise<void>;

  private done = false;

  constructor(private readonly client: RpcClient, private readonly o: LoadOptions) {
    if (o.until) void o.until.finally(() => (this.done = true)).catch(() => undefined);
    else this.done = true;
    this.finished = Promise.all(Array.from({ length: o.inflight }, () => this.loop())).then(() => undefined);
  }

  /** Calls settled so far. */
  get settled(): number {
    return this.settledCount;
  }

  /** Resolves once `n` calls have settled (the fault goes in while the rest are in flight). */
  async settledAtLeast(n: number, timeoutMs = 20_000): Promise<void> {
    await waitFor(() => this.settledCount >= n, { timeoutMs, message: `${n} calls settled (have ${this.settledCount})` });
  }

  private async loop(): Promise<void> {
    while (this.issued < this.o.total || !this.done) {
      const i = this.issued++;
      const every = this.o.notifyEvery ?? 10;
      if (every > 0 && i % every === 0) void this.note(`n${i}`);
      await this.call(i);
    }
  }

  private async call(i: number): Promise<void> {
    const timeoutMs = typeof this.o.timeoutMs === 'function' ? this.o.timeoutMs(i) : (this.o.timeoutMs ?? 8000);
    const params = this.o.params?.(i) ?? { ms: 20 + (i % 61), n: i };
    const callId = this.client.nextCallId();
    const issuedAt = Date.now();
    const record: CallRecord = { callId, issuedAt, deadline: issuedAt + timeoutMs, settledAt: undefined, outcome: undefined };
    this.calls.push(record);
    // An explicit JSON-RPC id keeps nextCallId() exact (see libs/inflight/test/support.ts).
    const options = { timeoutMs, deadline: record.deadline, id: callId };
    const call = this.o.recoverWith ? callWithRecovery<number>(this.client, this.o.recoverWith, workMethod, params, options) : this.client.call<number>(workMethod, params, options);
    const answer = call.then(
      (value) => (value === params.n * 2 ? 'ok' : ('other:wrong-result' as Outcome)),
      outcomeOf,
    );
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve('hung'), timeoutMs + (this.o.hangMs ?? 3000))));
    const outcome = await Promise.race([answer, hung]);
    clearTimeout(timer);
    if (outcome !== 'hung') record.settledAt = Date.now();
    record.outcome = outcome;
    this.settledCount++;
  }

  private async note(id: string): Promise<void> {
    const record: NoteRecord = { id, outcome: undefined };
    this.notes.push(record);
    record.outcome = await this.client.notify(noteMethod, [id], { timeoutMs: 8000 }).then(() => 'ok' as const, outcomeOf);
  }
}

/** How many calls ended each way, e.g. `{ ok: 590, '-32007': 10 }`. */
export function tally(records: readonly { outcome: Outcome | undefined }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) out[String(r.outcome)] = (out[String(r.outcome)] ?? 0) + 1;
  return out;
}

/** Calls that settled later than `slackMs` past their deadline, or never, or in an undocumented way. */
export function lateOrUnexpected(records: readonly CallRecord[], allowed: readonly Outcome[], slackMs: number): CallRecord[] {
  return records.filter((r) => r.settledAt === undefined || r.settledAt > r.deadline + slackMs || r.outcome === undefined || !allowed.includes(r.outcome));
}
