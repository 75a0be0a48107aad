import type { WireConfirmChannel, WirePublishOptions } from '@warren/amqp-transport';
import { RpcConnectionLostError, RpcNotConfirmedError, RpcTimeoutError, type LocalError, type PendingCalls, type ResponseMessage } from '@warren/jsonrpc';
import type { Names } from '../wire/names';
import { DelayChain } from './delay-chain';
import { PublishHeaders } from './publish-headers';

/** A request on its way to the broker, held as one object while disconnected. */
export interface OutboundRequest {
  readonly callId: string;
  readonly method: string;
  readonly body: Buffer;
  readonly deadline: number;
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  readonly persistent: boolean;
  /** The caller listens for progress. */
  readonly progress: boolean;
  /** A delayed call: when it is due (ms since the epoch); it waits in the delay chain until then. */
  readonly dueAt: number | undefined;
}

/** A notification on its way to the broker. */
export interface OutboundNotification {
  readonly method: string;
  readonly messageId: string;
  readonly body: Buffer;
  readonly traceparent: string;
  readonly tracestate: string | undefined;
  readonly persistent: boolean;
  readonly dueAt: number | undefined;
  /** How long RabbitMQ's confirm may take. */
  readonly timeoutMs: number;
}

export interface OutboxDeps {
  readonly n: Names;
  readonly pending: PendingCalls<string, ResponseMessage>;
  /** Calls published and not yet answered; the ones a lost reply path takes with it. */
  readonly onWire: Set<string>;
  readonly channel: () => WireConfirmChannel | undefined;
  readonly replyQueue: () => string;
  /** Holds a publish while disconnected (the offline buffer), or fails it (closing, buffer full). */
  readonly holdOrFail: (publish: () => void, fail: (err: LocalError) => void) => void;
}

/**
 * How an RpcClient's requests and notifications go onto its channel: the properties and headers,
 * the delay chain for what is not due yet, and what a nack or a lost channel fails them with.
 */
export class ClientOutbox {
  private readonly headers = new PublishHeaders();
  private readonly delay: DelayChain;
  /** Message ids of notifications published and not confirmed yet, and those of them RabbitMQ returned. */
  private readonly notesOnWire = new Set<string>();
  private readonly returnedNotes = new Set<string>();

  constructor(private readonly d: OutboxDeps) {
    this.delay = new DelayChain(d.n);
  }

  /** Publishes a request (or holds it while disconnected); its failures settle it in the pending table. */
  request(request: OutboundRequest): void {
    const { callId } = request;
    const { pending } = this.d;
    if (!pending.has(callId)) return; // timed out or aborted while held
    const ch = this.d.channel();
    if (!ch) return this.d.holdOrFail(() => this.request(request), (err) => pending.reject(callId, err));
    const remaining = request.deadline - Date.now();
    if (remaining <= 0) return void pending.reject(callId, new RpcTimeoutError());
    const props: WirePublishOptions = {
      mandatory: true,
      contentType: 'application/json',
      correlationId: callId,
      replyTo: this.d.replyQueue(),
      // The queue drops a request nobody took before its deadline.
      expiration: String(remaining),
      persistent: request.persistent,
      headers: this.headers.forRequest(request.deadline, request.traceparent, request.progress, request.tracestate),
    };
    this.d.onWire.add(callId);
    const confirmed = (err: unknown): void => {
      // Confirms are handled as they come: no call waits for its confirm before the next publish.
      if (!err) return;
      // amqplib fails unconfirmed publishes before our own 'close' listener runs; by the next
      // microtask we know whether the channel died. A nack on a live channel means the broker
      // refused it (it never ran); a publish lost with its channel may or may not have arrived.
      queueMicrotask(() => {
        const failure = this.d.channel() === ch
          ? new RpcNotConfirmedError('not_confirmed', { cause: err })
          : new RpcConnectionLostError('unconfirmed_at_disconnect', { cause: err });
        pending.reject(callId, failure);
      });
    };
    try {
      if (request.dueAt !== undefined && request.dueAt > Date.now()) this.delay.publish(ch, 'call', request.method, request.body, props, request.dueAt, confirmed);
      else ch.publish(this.d.n.requestExchange, request.method, request.body, props, confirmed);
    } catch (err) {
      pending.reject(callId, new RpcNotConfirmedError('publish_failed', { cause: err }));
    }
  }

  /**
   * Publishes a notification (held while disconnected), mandatory: resolves on RabbitMQ's confirm with
   * whether a subscriber's queue took it (`false`: RabbitMQ returned it, nobody subscribes; `undefined`:
   * delayed, so only checked when due, and not reported), else rejects with a LocalError.
   */
  notification(note: OutboundNotification): Promise<boolean | undefined> {
    return new Promise<boolean | undefined>((resolve, reject) => {
      const timer = setTimeout(() => reject(new RpcNotConfirmedError('not_confirmed_in_time')), note.timeoutMs);
      let delayed = false;
      const settle = (err?: unknown): void => {
        clearTimeout(timer);
        // RabbitMQ sends a mandatory publish's return before its confirm.
        const routed = delayed ? undefined : !this.returnedNotes.delete(note.messageId);
        this.notesOnWire.delete(note.messageId);
        if (err) reject(new RpcNotConfirmedError('not_confirmed', { cause: err }));
        else resolve(routed);
      };
      const fail = (err: LocalError): void => {
        clearTimeout(timer);
        reject(err);
      };
      const publish = (): void => {
        const ch = this.d.channel();
        if (!ch) return this.d.holdOrFail(publish, fail);
        try {
          const props = { mandatory: true, contentType: 'application/json', messageId: note.messageId, persistent: note.persistent, headers: this.headers.forEvent(note.traceparent, note.tracestate) };
          delayed = note.dueAt !== undefined && note.dueAt > Date.now();
          this.notesOnWire.add(note.messageId);
          if (delayed && note.dueAt !== undefined) this.delay.publish(ch, 'event', note.method, note.body, props, note.dueAt, (err) => settle(err ?? undefined));
          else ch.publish(this.d.n.eventExchange, note.method, note.body, props, (err) => settle(err ?? undefined));
        } catch (err) {
          settle(err);
        }
      };
      publish();
    });
  }

  /** RabbitMQ returned a notification (mandatory, no queue bound for its method): its confirm resolves `false`. */
  notificationReturned(messageId: string): void {
    if (this.notesOnWire.has(messageId)) this.returnedNotes.add(messageId);
  }
}
