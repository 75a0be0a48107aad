/**
 * Deletes what a peer declared, over a connection of its own once the peer closed its own: the
 * frameworks leave their queues and exchanges behind on purpose (they may hold messages), and a
 * bench must not. rabbitmq-client does it because it ships its types (amqplib 0.10 does not).
 */
import { Connection } from 'rabbitmq-client';

export interface Declared {
  readonly queues: Iterable<string>;
  readonly exchanges: Iterable<string>;
}

export async function deleteDeclared(url: string, declared: Declared): Promise<void> {
  const rabbit = new Connection({ url, noDelay: true, retryLow: 100, retryHigh: 500 });
  try {
    await rabbit.onConnect(5_000);
    // Deleting a queue or exchange that is already gone is not an error in RabbitMQ.
    for (const queue of declared.queues) await rabbit.queueDelete({ queue });
    for (const exchange of declared.exchanges) await rabbit.exchangeDelete({ exchange });
  } finally {
    await rabbit.close();
  }
}
