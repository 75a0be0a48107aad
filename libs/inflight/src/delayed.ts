import type { CallInfo } from '@warren/calls';
import type { Logger } from '@warren/logger';
import { callTtlMs } from './keys';
import type { DelayedStore } from './store-port';

/** A delayed call as `delayed.list` shows it (docs/scheduling.md, "Delayed calls"). */
export interface DelayedCall {
  readonly callId: string;
  /** The service meant to run it ('' when the sender did not know). */
  readonly service: string;
  readonly method: string;
  /** When it becomes due (ISO 8601). */
  readonly dueAt: string;
  /** When it was sent (ISO 8601). */
  readonly createdAt: string;
  /** Its deadline (ISO 8601): due time plus its timeout, unless the caller gave one. */
  readonly deadline: string;
  /** Who sent it, as the sender recorded it (the gateway: the index of the bearer token). */
  readonly principal?: string;
}

/** What a sender records of a delayed call it publishes. */
export interface DelayedEntry {
  readonly callId: string;
  readonly method: string;
  readonly service?: string;
  readonly dueAt: number;
  readonly deadline: number;
  readonly principal?: string;
}

/** What came of `cancel`: the in-flight store's outcome (`O`: InflightView's CancelOutcome), and whether the call was listed here. */
export type DelayedCancel<O> = O & { readonly listed: boolean };

/** Most delayed calls listed at once; past it, those due last are dropped from the list (not from RabbitMQ). */
export const maxDelayedListed = 10_000;

interface Stored {
  readonly callId: string;
  readonly method: string;
  readonly service: string;
  readonly dueAt: number;
  readonly deadline: number;
  readonly createdAt: number;
  readonly principal?: string;
}

/**
 * The list of delayed calls a sender recorded (the broker records those it relays), kept in the
 * in-flight store beside the call records: a sorted set by due time and a hash of entries, under one
 * hash tag, with a TTL (keys.ts). It lists what was recorded, nothing else: a delayed call sent by a
 * client that records nothing waits in RabbitMQ all the same, unlisted. Bounded at
 * {@link maxDelayedListed}; an entry leaves once due.
 *
 * `cancel` marks the call cancelled in the store until its deadline (InflightView.cancel), so a
 * tracked worker that takes it when due answers -32003 without running it.
 */
export class DelayedCalls<O extends object> {
  constructor(
    private readonly store: DelayedStore,
    /** The store's cancel by id (InflightView.cancel), given the deadline when it is listed. */
    private readonly cancelCall: (callId: string, opts: { readonly deadline?: number }) => Promise<O>,
    private readonly graceMs: number,
    private readonly maxListed = maxDelayedListed,
  ) {}

  /** Records a delayed call until it is due. */
  async add(e: DelayedEntry): Promise<void> {
    const now = Date.now();
    const stored: Stored = { callId: e.callId, method: e.method, service: e.service ?? '', dueAt: e.dueAt, deadline: e.deadline, createdAt: now, ...(e.principal === undefined ? {} : { principal: e.principal }) };
    await this.store.listDelayed(e.callId, e.dueAt, JSON.stringify(stored), callTtlMs(e.deadline, now, this.graceMs), this.maxListed);
  }

  /** The recorded calls not yet due, soonest first, at most `limit`. */
  async list(limit = 100): Promise<DelayedCall[]> {
    const entries = await this.store.delayedEntries(Math.max(1, Math.min(limit, this.maxListed)));
    return entries.flatMap((text) => {
      const s = parse(text);
      return s === undefined ? [] : [shown(s)];
    });
  }

  /**
   * Cancels a delayed call by id: marked cancelled until its deadline (the listed one, else the
   * store's default mark lifetime), and dropped from the list.
   */
  async cancel(callId: string): Promise<DelayedCancel<O>> {
    const listed = parse((await this.store.delayedEntry(callId)) ?? '');
    const outcome = await this.cancelCall(callId, listed === undefined ? {} : { deadline: listed.deadline });
    if (listed !== undefined) await this.store.unlistDelayed([callId]);
    return { ...outcome, listed: listed !== undefined };
  }

  /** The listed deadline of a call (ms since the epoch), if it is listed. */
  async deadlineOf(callId: string): Promise<number | undefined> {
    return parse((await this.store.delayedEntry(callId)) ?? '')?.deadline;
  }
}

/**
 * Records every delayed call `client` sends in `delayed`. `service` names a method's service when
 * known, `principal` who sent a call. A failed write is logged and the call goes on.
 *
 * @example trackDelayed(client, view.delayed, { service: (m) => registry.serviceOf(m) })
 */
export function trackDelayed(
  client: { onSend(listener: (call: CallInfo) => void): void },
  delayed: Pick<DelayedCalls<object>, 'add'>,
  opts: { readonly service?: (method: string) => string | undefined; readonly principal?: (callId: string) => string | undefined; readonly log?: Logger } = {},
): void {
  client.onSend((call) => {
    if (call.dueAt === undefined) return;
    const service = call.service ?? opts.service?.(call.method);
    const principal = opts.principal?.(call.callId);
    delayed.add({ callId: call.callId, method: call.method, dueAt: call.dueAt, deadline: call.deadline, ...(service === undefined ? {} : { service }), ...(principal === undefined ? {} : { principal }) })
      .catch((err: unknown) => opts.log?.warn({ err, callId: call.callId }, 'delayed call not listed (in-flight store unavailable)'));
  });
}

function parse(text: string): Stored | undefined {
  try {
    const v = JSON.parse(text) as Partial<Stored>;
    return typeof v.callId === 'string' && typeof v.method === 'string' && typeof v.dueAt === 'number' && typeof v.deadline === 'number' ? (v as Stored) : undefined;
  } catch {
    return undefined;
  }
}

function shown(s: Stored): DelayedCall {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return { callId: s.callId, service: s.service ?? '', method: s.method, dueAt: iso(s.dueAt), createdAt: iso(s.createdAt ?? s.dueAt), deadline: iso(s.deadline), ...(typeof s.principal === 'string' ? { principal: s.principal } : {}) };
}
