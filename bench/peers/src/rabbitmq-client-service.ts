/**
 * rabbitmq-client answering `add`: a Consumer on a durable queue of the bench's (prefetch from the
 * bench, manual acks, which the library sends once the handler settles), replying with the handler's
 * `reply()` to the request's replyTo (direct reply-to, as the RPCClient asks). As its README shows.
 */
import { Connection } from 'rabbitmq-client';
import { deleteDeclared } from './cleanup.js';
import { sum, type ServeFn } from './contract.js';

export const serve: ServeFn = async (spec) => {
  const rabbit = new Connection({ url: spec.url, noDelay: true });
  const queue = `${spec.name}.add`;
  const consumer = rabbit.createConsumer(
    // x-expires: a safety net for a crashed run; a clean stop deletes the queue.
    { queue, queueOptions: { durable: true, arguments: { 'x-expires': 60_000 } }, qos: { prefetchCount: spec.prefetch } },
    async (msg, reply) => {
      await reply({ result: sum(msg.body) });
    },
  );
  await new Promise<void>((resolve, reject) => {
    consumer.once('ready', () => resolve());
    consumer.once('error', reject);
  });
  return async () => {
    await consumer.close();
    await rabbit.close();
    await deleteDeclared(spec.url, { queues: [queue], exchanges: [] });
  };
};
