import { EventEmitter } from 'node:events';
import { closeChannel, type WireChannel, type WireModel, type WireConnection } from '@warren/amqp-transport';
import { silentLogger, type Logger } from '@warren/logger';
import { parseAnnouncement, type AnnounceMessage, type AnnouncementParse } from './announcement';
import { DiscoveryRound } from './discovery-round';
import { names, type Names } from '../wire/names';
import { applyTopology, coreTopology } from '../wire/topology';

export type InstanceInfo = AnnounceMessage & { readonly lastSeen: number };

/** What views of the registry (the broker's GET /services, `warren services`) show of an instance. */
export type InstanceSummary = Pick<InstanceInfo, 'instanceId' | 'startedAt' | 'lastSeen' | 'running' | 'consuming' | 'metadata' | 'tracking' | 'worker'>;

export function summarizeInstance(i: InstanceInfo): InstanceSummary {
  return {
    instanceId: i.instanceId, startedAt: i.startedAt, lastSeen: i.lastSeen, running: i.running, consuming: i.consuming, metadata: i.metadata,
    ...(i.tracking === undefined ? {} : { tracking: i.tracking }),
    ...(i.worker === undefined ? {} : { worker: i.worker }),
  };
}

export interface RegistryOptions {
  /** @default 'warren' */
  readonly namespace?: string;
  /** An instance not heard from for this many of its own intervals is dropped. @default 3 */
  readonly missedIntervals?: number;
  /**
   * On start and after every reconnect, ask every instance to announce now
   * (within `jitterMs`), instead of waiting up to a whole interval for them.
   * @default true
   */
  readonly announceNow?: boolean;
  /** Spread asked of the instances' answers. @default 200 */
  readonly jitterMs?: number;
  /**
   * The first round is complete once `jitterMs + settleMs` have passed since
   * the request and no announcement has arrived for `settleMs`. @default 500
   */
  readonly settleMs?: number;
  /** The first round never lasts longer than this. @default 3000 */
  readonly maxWaitMs?: number;
  readonly logger?: Logger;
}

interface RegistryEvents {
  change: [];
}

/**
 * The live view of service instances, built from the announcements on the
 * control exchange, each validated against the announcement schema. It needs
 * no storage of its own: on start and after every reconnect it asks every
 * instance to announce now, so it is whole again within its first round.
 */
export class ServiceRegistry extends EventEmitter<RegistryEvents> {
  private readonly instances = new Map<string, InstanceInfo>();
  private readonly n: Names;
  private readonly log: Logger;
  private sweepTimer: NodeJS.Timeout | undefined;
  private unregister: (() => void) | undefined;
  private channel: WireChannel | undefined;
  private readonly round: DiscoveryRound;
  private droppedCount = 0;
  /** Senders of dropped announcements already logged (bounded: senders are whoever can publish). */
  private readonly loggedSenders = new Set<string>();

  private constructor(private readonly connection: WireConnection, private readonly options: RegistryOptions) {
    super();
    this.n = names(options.namespace);
    this.log = (options.logger ?? silentLogger()).child({ component: 'registry' });
    this.round = new DiscoveryRound(this.log, options);
  }

  static async start(connection: WireConnection, options: RegistryOptions = {}): Promise<ServiceRegistry> {
    const registry = new ServiceRegistry(connection, options);
    registry.unregister = await connection.onOpen((model) => registry.setup(model));
    registry.sweepTimer = setInterval(() => registry.sweep(), 1000);
    registry.sweepTimer.unref();
    return registry;
  }

  /**
   * Resolves when the first discovery round is over: every instance that
   * answered the registry's announce-now request within the round is listed.
   * Never rejects; without announce-now it resolves at once.
   */
  discovered(): Promise<void> {
    return this.round.complete;
  }

  /** Whether the first discovery round is over (see `discovered()`). */
  get discoveryComplete(): boolean {
    return this.round.done;
  }

  /** Announcements dropped because they did not fit the schema. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Every live instance. */
  list(): InstanceInfo[] {
    return [...this.instances.values()];
  }

  /** Live instances grouped by service name. */
  byService(): Map<string, InstanceInfo[]> {
    const grouped = new Map<string, InstanceInfo[]>();
    for (const i of this.instances.values()) grouped.set(i.service, [...(grouped.get(i.service) ?? []), i]);
    return grouped;
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.round.close();
    this.unregister?.();
    const ch = this.channel;
    this.channel = undefined;
    if (ch) await closeChannel(ch);
  }

  private async setup(model: WireModel): Promise<void> {
    const ch = await model.createChannel();
    ch.on('error', (err: Error) => this.log.warn({ err }, 'registry channel error'));
    await applyTopology(ch, coreTopology(this.n));
    // A private queue per registry: every registry sees every announcement.
    const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true, arguments: { 'x-max-length': 10_000 } });
    await ch.bindQueue(queue, this.n.controlExchange, '');
    await ch.consume(queue, (msg) => msg && this.apply(parseAnnouncement(msg.content)), { noAck: true });
    this.channel = ch;
    // Only now: answers published before our queue was bound would be lost.
    this.round.ask(ch, this.n);
  }

  private apply(parsed: AnnouncementParse): void {
    if (!parsed.ok) {
      this.droppedCount++;
      // Once per sender: a misbehaving instance announces every interval, forever.
      if (this.loggedSenders.size < 1000 && !this.loggedSenders.has(parsed.sender)) {
        this.loggedSenders.add(parsed.sender);
        this.log.warn({ sender: parsed.sender, reason: parsed.reason, details: parsed.details }, 'announcement dropped: it does not fit docs/schemas/announcement.schema.json');
      }
      return;
    }
    const a = parsed.announcement;
    this.round.heard();
    const key = `${a.service}/${a.instanceId}`;
    if (a.type === 'withdraw') this.instances.delete(key);
    else this.instances.set(key, { ...a, lastSeen: Date.now() });
    this.emit('change');
  }

  private sweep(): void {
    const now = Date.now();
    const missed = this.options.missedIntervals ?? 3;
    let changed = false;
    for (const [key, i] of this.instances) {
      if (now - i.lastSeen > i.intervalMs * missed) {
        this.instances.delete(key);
        changed = true;
      }
    }
    if (changed) this.emit('change');
  }
}
