import type { WireChannel, WireMessage } from '@warren/amqp-transport';

/** Lets a MemoryBroker's deferred work (promise jobs) run; works with fake timers too, since it only awaits promises. */
export async function settle(rounds = 50): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/** Consumes `queue` into an array; the returned list grows as deliveries arrive. */
export async function collect(ch: WireChannel, queue: string, options: { noAck?: boolean } = {}): Promise<{ got: WireMessage[]; tag: string; cancelled: () => boolean }> {
  const got: WireMessage[] = [];
  let nulls = 0;
  const { consumerTag } = await ch.consume(queue, (m) => (m ? got.push(m) : nulls++), { noAck: options.noAck ?? false });
  return { got, tag: consumerTag, cancelled: () => nulls > 0 };
}
