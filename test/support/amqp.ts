import amqp from 'amqplib';
import { names, type Names } from '@warren/amqp';
import { delayLevels } from '../../libs/amqp/src/wire/delay';
import { amqpUrl, uniqueName } from '@warren/testkit';

/**
 * A namespace of its own for one test file, so files never see each other's
 * exchanges or queues, and a way to delete what was declared in it.
 */
export class TestNamespace {
  readonly names: Names;
  private readonly services = new Set<string>();
  private readonly instances: [string, string][] = [];
  private readonly queues = new Set<string>();
  private delayChain = false;

  /** `namespace`: a name of your own (the soak's), else a unique one. */
  constructor(readonly namespace: string = uniqueName('t').replace(/[^A-Za-z0-9_.-]/g, '')) {
    this.names = names(namespace);
  }

  /** Remembers a service whose queues must be deleted at the end. */
  service(name: string): string {
    this.services.add(name);
    return name;
  }

  /** Remembers another queue to delete at the end (a delay queue, say). */
  queue(name: string): string {
    this.queues.add(name);
    return name;
  }

  /** Remembers that the namespace's delay chain (wire/delay.ts) is declared: its queues and exchanges go too. */
  withDelayChain(): this {
    this.delayChain = true;
    return this;
  }

  /** Deletes the queues of every service named through {@link service}, and the namespace's exchanges. */
  async destroy(url: string = amqpUrl()): Promise<void> {
    const model = await amqp.connect(url);
    try {
      const ch = await model.createChannel();
      for (const s of this.services) {
        for (const q of [this.names.serviceQueue(s), this.names.deadLetterQueue(s), this.names.serviceEventQueue(s)]) await ch.deleteQueue(q);
      }
      for (const [s, i] of this.instances) await ch.deleteQueue(this.names.instanceEventQueue(s, i));
      for (const q of this.queues) await ch.deleteQueue(q);
      if (this.delayChain) {
        for (let level = 0; level < delayLevels; level++) await ch.deleteQueue(this.names.delayQueue(level));
        for (let level = 0; level < delayLevels; level++) await ch.deleteExchange(this.names.delayExchange(level));
        await ch.deleteExchange(this.names.delayDueExchange);
      }
      for (const e of [this.names.requestExchange, this.names.eventExchange, this.names.deadLetterExchange, this.names.controlExchange, this.names.discoverExchange, this.names.cancelExchange]) await ch.deleteExchange(e);
      await ch.close();
    } finally {
      await model.close();
    }
  }
}

/** Messages waiting in a queue (0 when it does not exist). */
export async function queueDepth(queue: string): Promise<number> {
  const model = await amqp.connect(amqpUrl());
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    try {
      return (await ch.checkQueue(queue)).messageCount;
    } catch {
      return 0;
    }
  } finally {
    await model.close().catch(() => undefined);
  }
}

/** Publishes raw bytes with raw properties, as a non-Warren client (or an attacker) would. */
export async function publishRaw(exchange: string, routingKey: string, body: Buffer, props: amqp.Options.Publish = {}): Promise<void> {
  const model = await amqp.connect(amqpUrl());
  try {
    const ch = await model.createConfirmChannel();
    ch.publish(exchange, routingKey, body, props);
    await ch.waitForConfirms();
    await ch.close();
  } finally {
    await model.close();
  }
}

/** Whether a queue exists right now. */
export async function queueExists(queue: string): Promise<boolean> {
  const model = await amqp.connect(amqpUrl());
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    try {
      await ch.checkQueue(queue);
      return true;
    } catch {
      return false;
    }
  } finally {
    await model.close().catch(() => undefined);
  }
}
