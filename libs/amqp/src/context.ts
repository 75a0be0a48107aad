import type { Id, JsonValue, Params } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { BatchEntry, BatchResult, CallOptions, NotifyOptions, RpcClient } from './client';

/** Everything a handler gets besides its params. Handlers never see amqplib, Redis, or acks. */
export interface HandlerContext {
  /** Cluster-unique call id (the AMQP correlation id). */
  readonly callId: string;
  readonly method: string;
  /** The caller's JSON-RPC id; undefined for notifications. */
  readonly id: Id | undefined;
  /** Absolute deadline, ms since the epoch. */
  readonly deadline: number;
  /** Fires at the deadline, on cancellation, or when the service shuts down; `reason` says which. */
  readonly signal: AbortSignal;
  /** 1 on first delivery, higher on redelivery. */
  readonly attempt: number;
  /** W3C traceparent of this call. */
  readonly traceparent: string;
  readonly service: string;
  readonly instanceId: string;
  /** A child logger bound to this call (callId, method). */
  readonly log: Logger;
  /** Makes nested calls that inherit this call's remaining deadline, trace and cancellation. */
  readonly client: NestedClient;
}

/** The client a handler uses for nested calls. */
export interface NestedClient {
  call<R = JsonValue>(method: string, params?: Params, opts?: Omit<CallOptions, 'deadline' | 'traceparent'>): Promise<R>;
  notify(method: string, params?: Params, opts?: Omit<NotifyOptions, 'traceparent'>): Promise<void>;
  batch(entries: readonly BatchEntry[]): Promise<BatchResult[]>;
}

/** Binds a client to a parent call: children cannot outlive the parent and continue its trace. */
export function nestedClient(client: RpcClient, parent: { deadline: number; traceparent: string; signal: AbortSignal }): NestedClient {
  const inherit = (opts: Omit<CallOptions, 'deadline' | 'traceparent'> = {}): CallOptions => ({
    ...opts,
    deadline: parent.deadline,
    traceparent: parent.traceparent,
    signal: opts.signal ? AbortSignal.any([opts.signal, parent.signal]) : parent.signal,
  });
  return {
    call: (method, params, opts) => client.call(method, params, inherit(opts)),
    notify: (method, params, opts) => client.notify(method, params, { ...opts, traceparent: parent.traceparent }),
    batch: (entries) => client.batch(entries, inherit()),
  };
}
