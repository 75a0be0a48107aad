import type { Channel } from 'amqplib';
import type { Logger } from '@warren/logger';
import { announceNowRequest, maxAnswerDelayMs } from './announce-now';
import type { Names } from './names';

export interface DiscoveryRoundOptions {
  /** @default true */
  readonly announceNow?: boolean;
  /** @default 200 */
  readonly jitterMs?: number;
  /** @default 300 */
  readonly settleMs?: number;
}

/**
 * A registry's announce-now rounds. The first one gates readiness: it is
 * complete `jitterMs + settleMs` after the request went out, by when every
 * instance that got it has answered (each answers within `jitterMs`). How
 * many instances exist is known to nobody, so the round is bounded in time,
 * not counted. Later rounds (after a reconnect) only refresh.
 */
export class DiscoveryRound {
  readonly complete: Promise<void>;
  private finish!: () => void;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;
  private readonly enabled: boolean;
  private readonly jitterMs: number;
  private readonly settleMs: number;

  constructor(
    private readonly log: Logger,
    options: DiscoveryRoundOptions,
  ) {
    this.enabled = options.announceNow ?? true;
    this.jitterMs = Math.min(options.jitterMs ?? 200, maxAnswerDelayMs);
    this.settleMs = options.settleMs ?? 300;
    for (const [field, value] of [['jitterMs', this.jitterMs], ['settleMs', this.settleMs]] as const) {
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
  ask(channel: Channel, n: Names): void {
    if (!this.enabled) return;
    try {
      channel.publish(n.discoverExchange, '', Buffer.from(JSON.stringify(announceNowRequest(this.jitterMs))), { contentType: 'application/json', expiration: String(this.jitterMs + this.settleMs + 1000) });
    } catch (err) {
      // The round still ends on time: instances announce on their own interval anyway.
      this.log.warn({ err }, 'announce-now request not published');
    }
    if (this.finished || this.timer) return;
    this.timer = setTimeout(() => this.end(), this.jitterMs + this.settleMs);
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
