import type { Logger } from '@warren/logger';
import { backoffDelay, defaultBackoff, type ResolvedBackoff } from '@warren/amqp-transport';

export interface ResubscribeOptions {
  /**
   * One attempt to declare and consume again. Resolves when consuming, or when there is nothing to
   * do now (the service is closing, or the connection is down: its reconnect re-runs the setup);
   * rejects when the attempt failed, and another is scheduled.
   */
  readonly attempt: () => Promise<void>;
  readonly log: Logger;
  /** @default defaultBackoff (100 ms doubling to 5 s, 30 % jitter) */
  readonly backoff?: ResolvedBackoff;
}

/**
 * Brings a service's consumers back when RabbitMQ takes them away under a live connection: a
 * consumer cancel (its queue was deleted, or the classic queue's home node went down), or a
 * rebuild that failed (the re-declare answered 404 while that node was still down). It tries again
 * with backoff and jitter, for as long as it takes, until an attempt consumes again or the service
 * closes: giving up after a few tries is what left workers consuming nothing, for good, after a
 * node came back (issue 28). The jitter keeps a fleet that lost one node from re-declaring in
 * lockstep. A lost connection is not its business: the connection re-runs the setup on its next one.
 *
 * @example
 * const again = new Resubscriber({ attempt: () => rebuild(), log });
 * channel.on('close', () => again.lost());
 * // once consuming: again.consuming(); on close: again.close();
 */
export class Resubscriber {
  private timer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private trying = false;
  private closed = false;
  private readonly backoff: ResolvedBackoff;

  constructor(private readonly o: ResubscribeOptions) {
    this.backoff = o.backoff ?? defaultBackoff;
  }

  /** Failed attempts since the service last consumed (0 while consuming). */
  get failures(): number {
    return Math.max(0, this.attempts - 1);
  }

  /** The consumers are gone: schedules attempts until one succeeds. A no-op while one is scheduled or running. */
  lost(): void {
    if (this.closed || this.timer !== undefined || this.trying) return;
    const attempt = ++this.attempts;
    const delayMs = backoffDelay(attempt, this.backoff);
    this.timer = setTimeout(() => this.run(attempt), delayMs);
  }

  /** Consuming again (by an attempt or by the connection's own setup): the next loss starts from the first delay. */
  consuming(): void {
    this.attempts = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Stops for good (the service closes); idempotent. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private run(attempt: number): void {
    this.timer = undefined;
    if (this.closed) return;
    this.trying = true;
    this.o.attempt().then(
      () => {
        this.trying = false;
      },
      (err: unknown) => {
        this.trying = false;
        this.o.log.warn({ err, attempt }, 'service not consuming: re-subscribe failed; trying again');
        this.lost();
      },
    );
  }
}
