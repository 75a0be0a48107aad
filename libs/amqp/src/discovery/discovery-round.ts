import type { WireChannel } from '@warren/amqp-transport';
import type { Logger } from '@warren/logger';
import { announceNowRequest, maxAnswerDelayMs } from './announce-now';
import type { Names } from '../wire/names';

export interface DiscoveryRoundOptions {
  /** @default true */
  readonly announceNow?: boolean;
  /** @default 200 */
  readonly jitterMs?: number;
  /** @default 500 */
  readonly settleMs?: number;
  /** @default 3000 */
  readonly maxWaitMs?: number;
}

/**
 * A registry's announce-now rounds. The first one gates readiness. How many
 * instances exist is known to nobody, so the round is bounded in time, not
 * counted: it is complete once `jitterMs + settleMs` have passed since the
 * request went out (each instance answers within `jitterMs`; `settleMs`
 * covers delivery) and no announcement has arrived for `settleMs`, so a
 * loaded RabbitMQ whose answers trickle in gets more time; never later than
 * `maxWaitMs`. Later rounds (after a reconnect) only refresh.
 */
export class DiscoveryRound {
  readonly complete: Promise<void>;
  private finish!: () => void;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;
  private readonly enabled: boolean;
  private readonly jitterMs: number;
  private readonly settleMs: number;
  private readonly maxWaitMs: number;
  private askedAt = 0;
  private endsAt = 0;

  constructor(
    private readonly log: Logger,
    options: DiscoveryRoundOptions,
  ) {
    this.enabled = options.announceNow ?? true;
    this.jitterMs = Math.min(options.jitterMs ?? 200, maxAnswerDelayMs);
    this.settleMs = options.settleMs ?? 500;
    this.maxWaitMs = options.maxWaitMs ?? 3000;
    for (const [field, value] of [['jitterMs', this.jitterMs], ['settleMs', this.settleMs], ['maxWaitMs', this.maxWaitMs]] as const) {
      if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`RegistryOptions.${field} must be a whole number of ms, got ${String(value)}`);
    }
    this.complete = new Promise((resolve) => {
      this.finish = resolve;
    });
    if (!this.enabled) this.end();
  }

  get done(): boolean {
    return this.finished;
  }

  /** Publishes an announce-now request on `channel`; the first call starts the round that `complete` waits for. */
  ask(channel: WireChannel, n: Names): void {
    if (!this.enabled) return;
    try {
      channel.publish(n.discoverExchange, '', Buffer.from(JSON.stringify(announceNowRequest(this.jitterMs))), { contentType: 'application/json', expiration: String(this.jitterMs + this.settleMs + 1000) });
    } catch (err) {
      // The round still ends on time: instances announce on their own interval anyway.
      this.log.warn({ err }, 'announce-now request not published');
    }
    if (this.finished || this.timer) return;
    this.askedAt = Date.now();
    this.schedule(this.askedAt + Math.min(this.jitterMs + this.settleMs, this.maxWaitMs));
  }

  /** An announcement arrived: while the first round runs, it lasts until `settleMs` of quiet. */
  heard(): void {
    if (this.finished || !this.timer) return;
    const quietUntil = Math.min(Date.now() + this.settleMs, this.askedAt + this.maxWaitMs);
    if (quietUntil > this.endsAt) this.schedule(quietUntil);
  }

  private schedule(at: number): void {
    clearTimeout(this.timer);
    this.endsAt = at;
    this.timer = setTimeout(() => this.end(), Math.max(0, at - Date.now()));
  }

  close(): void {
    this.end();
  }

  private end(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.finished = true;
    this.finish();
  }
}
