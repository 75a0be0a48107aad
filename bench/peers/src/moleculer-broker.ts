/**
 * A Moleculer ServiceBroker set up as its docs recommend for speed over RabbitMQ: the AMQP
 * transporter (prefetch from the bench, `noDelay` through its `socketOptions`, which it hands to
 * amqplib's connect), the JSON serializer (the default, named), no logger, metrics or tracing, and
 * the built-in balancer left on: with one service node it sends each request straight to that node's
 * own queue (`MOL-<ns>.REQ.<node>`), the same single hop through RabbitMQ as the baseline.
 *
 * The transporter declares its own queues and fanout exchanges under `MOL-<namespace>` and leaves
 * them behind on stop (they may hold messages); the subclass below notes each name as it subscribes,
 * so the bench can delete them (cleanup.ts). Its queues are durable (amqplib's default), the
 * broadcast ones auto-delete: all allowed by RabbitMQ 4.3.
 */
import moleculer from 'moleculer';
import type { Declared } from './cleanup.js';

const { ServiceBroker, Transporters } = moleculer;

/** The AMQP transporter, noting what it declares. */
class NotingAmqp extends Transporters.AMQP {
  readonly declared = { queues: new Set<string>(), exchanges: new Set<string>() };

  override subscribe(cmd: string, nodeID?: string): Promise<void> {
    if (nodeID !== undefined && nodeID !== null) this.declared.queues.add(this.getTopicName(cmd, nodeID));
    else {
      this.declared.queues.add(`${this.prefix}.${cmd}.${this.nodeID}`);
      this.declared.exchanges.add(this.getTopicName(cmd));
    }
    return super.subscribe(cmd, nodeID);
  }

  override subscribeBalancedRequest(action: string): Promise<void> {
    this.declared.queues.add(`${this.prefix}.REQB.${action}`);
    return super.subscribeBalancedRequest(action);
  }

  override subscribeBalancedEvent(event: string, group: string): Promise<void> {
    this.declared.queues.add(`${this.prefix}.EVENTB.${group}.${event}`);
    return super.subscribeBalancedEvent(event, group);
  }
}

export interface BenchBroker {
  readonly broker: InstanceType<typeof ServiceBroker>;
  readonly declared: Declared;
}

export function benchBroker(opts: { url: string; namespace: string; nodeID: string; prefetch: number; timeoutMs: number }): BenchBroker {
  const transporter = new NotingAmqp({ url: opts.url, prefetch: opts.prefetch, socketOptions: { noDelay: true } } as ConstructorParameters<typeof Transporters.AMQP>[0]);
  const broker = new ServiceBroker({
    namespace: opts.namespace,
    nodeID: opts.nodeID,
    transporter,
    serializer: 'JSON',
    requestTimeout: opts.timeoutMs,
    logger: false,
    metrics: false,
    tracing: false,
    // The bench's process protocol stops the broker (serve-child.ts), then deletes what it declared:
    // Moleculer's own SIGTERM handler would stop it and exit first.
    skipProcessEventRegistration: true,
  });
  return { broker, declared: transporter.declared };
}
