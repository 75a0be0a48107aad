import { EventEmitter } from 'node:events';
import type { Channel, ChannelModel } from 'amqplib';
import { silentLogger, type Logger } from '@warren/logger';
import { parseAnnouncement, type Announcement } from './announcement';
import { closeChannel } from './close';
import type { AmqpConnection } from './connection';
import { names, type Names } from './names';
import { applyTopology, coreTopology } from './topology';

export type InstanceInfo = Extract<Announcement, { type: 'announce' }> & { readonly lastSeen: number };

/** What views of the registry (the broker's GET /services, `warren services`) show of an instance. */
export type InstanceSummary = Pick<InstanceInfo, 'instanceId' | 'startedAt' | 'lastSeen' | 'running' | 'metadata' | 'tracking'>;

export function summarizeInstance(i: InstanceInfo): InstanceSummary {
  return {
    instanceId: i.instanceId, startedAt: i.startedAt, lastSeen: i.lastSeen, running: i.running, metadata: i.metadata,
    ...(i.tracking === undefined ? {} : { tracking: i.tracking }),
  };
}

export interface RegistryOptions {
  /** @default 'warren' */
  readonly namespace?: string;
  /** An instance not heard from for this many of its own intervals is dropped. @default 3 */
  readonly missedIntervals?: number;
  readonly logger?: Logger;
}

interface RegistryEvents {
  change: [];
}

/**
 * The live view of service instances, built from the announcements on the
 * control exchange. It needs no storage of its own: after a restart it is
 * whole again within one announcement interval.
 */
export class ServiceRegistry extends EventEmitter<RegistryEvents> {
  private readonly instances = new Map<string, InstanceInfo>();
  private readonly n: Names;
  private readonly log: Logger;
  private sweepTimer: NodeJS.Timeout | undefined;
  private unregister: (() => void) | undefined;
  private channel: Channel | undefined;

  private constructor(private readonly connection: AmqpConnection, private readonly options: RegistryOptions) {
    super();
    this.n = names(options.namespace);
    this.log = (options.logger ?? silentLogger()).child({ component: 'registry' });
  }

  static async start(connection: AmqpConnection, options: RegistryOptions = {}): Promise<ServiceRegistry> {
    const registry = new ServiceRegistry(connection, options);
    registry.unregister = await connection.onOpen((model) => registry.setup(model));
    registry.sweepTimer = setInterval(() => registry.sweep(), 1000);
    registry.sweepTimer.unref();
    return registry;
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
    this.unregister?.();
    const ch = this.channel;
    this.channel = undefined;
    if (ch) await closeChannel(ch);
  }

  private async setup(model: ChannelModel): Promise<void> {
    const ch = await model.createChannel();
    ch.on('error', (err: Error) => this.log.warn({ err }, 'registry channel error'));
    await applyTopology(ch, coreTopology(this.n));
    // A private queue per registry: every registry sees every announcement.
    const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true, arguments: { 'x-max-length': 10_000 } });
    await ch.bindQueue(queue, this.n.controlExchange, '');
    await ch.consume(queue, (msg) => msg && this.apply(parseAnnouncement(msg.content)), { noAck: true });
    this.channel = ch;
  }

  private apply(a: Announcement | undefined): void {
    if (!a) return;
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
