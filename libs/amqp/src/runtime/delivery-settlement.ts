import type { WireChannel, WireMessage } from '@warren/amqp-transport';
import { encodeResponse, isErrorResponse, type ResponseMessage } from '@warren/jsonrpc';
import type { Settle } from '@warren/calls';
import type { Logger } from '@warren/logger';
import { forgedDeathHeader, forwardDeadLetter, type DeadLetterReason } from '../wire/dead-letter';
import type { DeliveryInfo } from '../wire/delivery';
import type { Names } from '../wire/names';
import { encodeProgress, progressHeaders, type ProgressListener } from '../wire/progress';
import type { CallFacts } from './context';
import { publishRetry } from './retry';
import type { ResolvedServiceOptions } from './service-options';
import type { ServiceStats } from './service-stats';

/** Why a call goes to a delay queue: its handler's retryable error, or its previous worker's death (the tracker's `retry`). */
export type RetryCause = 'retryable_error' | 'worker_lost';

export interface SettlementDeps {
  /** The service's consuming channel now; a delivery is settled only on the channel it came on. */
  readonly channel: () => WireChannel | undefined;
  readonly o: ResolvedServiceOptions;
  readonly n: Names;
  readonly log: Logger;
  readonly counters: ServiceStats;
  /** The waits a delay queue is declared for (MethodRetries.delayQueues). */
  readonly delayQueues: ReadonlySet<number>;
}

/**
 * What a service sends back for a delivery: the reply on the caller's reply queue, progress, and the
 * settle (ack, requeue, dead-letter by hand, or a retry through a delay queue).
 */
export class DeliverySettlement {
  constructor(private readonly d: SettlementDeps) {}

  /** Publishes a response (or its text, already serialized) to the caller's reply queue. */
  reply(info: DeliveryInfo, response: ResponseMessage | ResponseMessage[] | string): void {
    const ch = this.d.channel();
    if (!ch || !info.replyTo) return;
    try {
      // The default exchange drops a reply to a vanished queue quietly; it never closes the channel.
      ch.publish('', info.replyTo, Buffer.from(typeof response === 'string' ? response : encodeResponse(response)), { correlationId: info.callId, contentType: 'application/json', userId: this.d.o.userId });
    } catch (err) {
      this.d.log.warn({ err, callId: info.callId }, 'reply publish failed');
    }
  }

  /** Where one call's progress goes: its caller's reply queue (when asked for) and the tracker. */
  progressSink(facts: CallFacts): ProgressListener {
    return (p) => {
      const ch = this.d.channel();
      if (ch && facts.wantsProgress && facts.replyTo) {
        try {
          ch.publish('', facts.replyTo, encodeProgress(p), { correlationId: facts.callId, contentType: 'application/json', headers: progressHeaders, userId: this.d.o.userId });
        } catch (err) {
          this.d.log.debug({ err, callId: facts.callId }, 'progress not published');
        }
      }
      if (facts.tracked) this.d.o.tracker?.progress?.(facts.tracked, p).catch((err: unknown) => this.d.log.debug({ err, callId: facts.callId }, 'progress not stored'));
    };
  }

  /** Settles a delivery as its outcome says. */
  settleAs(ch: WireChannel, msg: WireMessage, settle: Settle, method: string, deadline: number, why: RetryCause): void {
    switch (settle.action) {
      case 'ack':
      case 'requeue':
        return this.settle(ch, msg, settle.action);
      case 'dead-letter':
        return this.settle(ch, msg, 'dead-letter', settle.code === undefined ? { reason: settle.reason, attempts: settle.attempts } : { reason: settle.reason, code: settle.code, attempts: settle.attempts });
      case 'retry':
        return this.retry(ch, msg, method, deadline, settle, why);
    }
  }

  /**
   * Acks, requeues or dead-letters on the channel the message came on; a dead channel means RabbitMQ
   * will redeliver it. Dead-lettering is done by hand (a copy with the reason, then an ack), so the
   * dead-letter queue says why (dead-letter.ts).
   */
  settle(ch: WireChannel, msg: WireMessage, action: 'ack' | 'dead-letter' | 'requeue', why: DeadLetterReason = { reason: 'rejected', attempts: 1 }): void {
    if (this.d.channel() !== ch) return;
    try {
      if (action === 'dead-letter') {
        if (forgedDeathHeader(msg)) this.d.log.warn({ callId: msg.properties.correlationId as unknown }, 'message with a malformed x-death header dead-lettered by hand');
        forwardDeadLetter(ch, this.d.n.deadLetterExchange, this.d.o.name, msg, why);
      } else if (action === 'ack') ch.ack(msg);
      else ch.nack(msg, false, true);
    } catch (err) {
      this.d.log.debug({ err }, 'settle on a closing channel');
    }
  }

  /**
   * Sends the request to its delay queue as the next attempt, then acks this one (retry.ts): after a
   * retryable error, or for a call whose worker was lost (the tracker's `retry`). A wait with no
   * declared delay queue (a tracker asking for one no policy here has) is requeued instead: the
   * default exchange would drop it silently.
   */
  private retry(ch: WireChannel, msg: WireMessage, method: string, deadline: number, next: { readonly delayMs: number; readonly nextAttempt: number }, why: RetryCause): void {
    if (this.d.channel() !== ch) return;
    const callId = msg.properties.correlationId as unknown;
    if (!this.d.delayQueues.has(next.delayMs)) {
      this.d.log.error({ callId, method, delayMs: next.delayMs }, 'no delay queue for this wait; requeued');
      return this.settle(ch, msg, 'requeue');
    }
    try {
      publishRetry(ch, this.d.n.retryQueue(this.d.o.name, next.delayMs), msg, next.nextAttempt, deadline);
      ch.ack(msg);
      this.d.counters.retried++;
      this.d.log.info({ callId, method, nextAttempt: next.nextAttempt, delayMs: next.delayMs, why }, why === 'worker_lost' ? 'call whose worker was lost retried after a delay' : 'call failed with a retryable error; retried after a delay');
    } catch (err) {
      this.d.log.debug({ err }, 'retry on a closing channel');
    }
  }
}

/** The reason headers of a dead letter answered with `response`; `data.attempts` (WorkerLost) counts over `attempt`. */
export function deadReason(reason: string, response: ResponseMessage, attempt: number): DeadLetterReason {
  if (!isErrorResponse(response)) return { reason, attempts: attempt };
  const data = response.error.data;
  const counted = typeof data === 'object' && data !== null && !Array.isArray(data) && typeof data['attempts'] === 'number' ? data['attempts'] : attempt;
  return { reason, code: response.error.code, attempts: counted };
}
