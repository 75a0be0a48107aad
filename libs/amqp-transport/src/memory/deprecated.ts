import type { WireQueueOptions } from '../contract';
import { MemoryChannelError, MemoryConnectionError } from './errors';

/**
 * What RabbitMQ 4.3 refuses by default (its deprecated features moved to "denied by default"), refused
 * here the same way, so every unit and embedded test guards Warren against them:
 *
 * - a queue both non-durable and non-exclusive (`transient_nonexcl_queues`) and the
 *   `x-queue-master-locator` argument (`queue_master_locator`): RabbitMQ closes the *connection* with
 *   541 INTERNAL_ERROR "Feature `...` is deprecated. ..." (rabbitmq-server's deprecated_features_SUITE);
 * - `x-queue-mode` (CQv1 storage is gone in 4.3): refused by argument validation, a channel error
 *   406 PRECONDITION_FAILED "invalid arg 'x-queue-mode' ..." (the wording of RabbitMQ's invalid-argument
 *   errors; the exact tail is not checked against a 4.3 node).
 *
 * Global QoS (`global_qos`) is refused here although RabbitMQ 4.3 only ignores it (`basic.qos` with
 * global=true is answered qos-ok and applied per consumer, rabbit_channel): code that asked for one
 * limit shared by the channel would silently get one per consumer there, so the twin is stricter on
 * purpose and closes the channel with 540 NOT_IMPLEMENTED, the code RabbitMQ gives other QoS it does
 * not implement (a prefetch size). Nothing in Warren asks for it.
 */
export function assertPermittedQos(global: boolean | undefined): void {
  if (global === true) throw new MemoryChannelError(540, 'global QoS is denied (deprecated feature `global_qos`, denied by default in RabbitMQ 4.3, which applies it per consumer)');
}

/** Refuses a queue declaration RabbitMQ 4.3 refuses (above). */
export function assertPermittedQueue(name: string, options: WireQueueOptions): void {
  const durable = options.durable ?? true;
  if (!durable && options.exclusive !== true) throw deniedFeature('transient_nonexcl_queues');
  const args = options.arguments ?? {};
  if (args['x-queue-master-locator'] !== undefined) throw deniedFeature('queue_master_locator');
  if (args['x-queue-mode'] !== undefined) {
    throw new MemoryChannelError(406, `invalid arg 'x-queue-mode' for queue '${name}' in vhost '/': {unsupported_argument,<<"x-queue-mode">>}`);
  }
}

export type DeniedFeature = 'transient_nonexcl_queues' | 'queue_master_locator';

/** RabbitMQ 4.3's close text, cut to AMQP's 255-byte reply-text as RabbitMQ cuts it. */
export function deniedFeature(feature: DeniedFeature): MemoryConnectionError {
  const text =
    `INTERNAL_ERROR - Feature \`${feature}\` is deprecated.\n` +
    'By default, this feature is not permitted anymore.\n' +
    'The feature will be removed from a future major RabbitMQ version, regardless of the configuration; actual version to be determined.\n' +
    `To continue using this feature when it is not permitted by default, set the following parameter in your configuration:\n    "deprecated_features.permit.${feature} = true"`;
  return new MemoryConnectionError(541, Buffer.from(text).subarray(0, 255).toString());
}
