import { names } from '../src/index';
import { resolveServiceOptions } from '../src/runtime/service-options';
import { serviceTopology } from '../src/wire/topology';

const n = names('t');
const input = { service: 's', instanceId: 'i1', methods: ['s.run'], notifications: ['s.note'], instanceNotifications: ['s.flush'], durable: true, deadLetterMax: 10 };

describe('queues on a cluster', () => {
  it('defaults to quorum queues when the connection names several nodes, and classic otherwise', () => {
    expect(resolveServiceOptions({ name: 's' }, { clustered: true }).queueType).toBe('quorum');
    expect(resolveServiceOptions({ name: 's' }, { clustered: false }).queueType).toBe('classic');
    expect(resolveServiceOptions({ name: 's' }).queueType).toBe('classic');
    // An explicit choice wins over the default.
    expect(resolveServiceOptions({ name: 's', queueType: 'classic' }, { clustered: true }).queueType).toBe('classic');
  });

  it('rejects a delivery limit that is not a positive integer, and sets none by default', () => {
    expect(() => resolveServiceOptions({ name: 's', deliveryLimit: 0 })).toThrow(/deliveryLimit/);
    expect(() => resolveServiceOptions({ name: 's', deliveryLimit: 1.5 })).toThrow(/deliveryLimit/);
    // A new argument on an existing queue is refused by RabbitMQ: opting in is the owner's choice.
    expect(resolveServiceOptions({ name: 's' }, { clustered: true }).deliveryLimit).toBeUndefined();
    const t = serviceTopology(n, { ...input, queueType: 'quorum' });
    expect(t.queues.every((q) => !('x-delivery-limit' in (q.options.arguments ?? {})))).toBe(true);
  });

  it('gives a quorum request queue its delivery limit and keeps its dead-letter route; instance queues stay exclusive', () => {
    const t = serviceTopology(n, { ...input, queueType: 'quorum', deliveryLimit: 7 });
    const byName = new Map(t.queues.map((q) => [q.name, q.options]));
    expect(byName.get(n.serviceQueue('s'))).toEqual({
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 7, 'x-dead-letter-exchange': n.deadLetterExchange, 'x-dead-letter-routing-key': 's' },
    });
    expect(byName.get(n.deadLetterQueue('s'))?.arguments).toMatchObject({ 'x-queue-type': 'quorum' });
    expect(byName.get(n.serviceEventQueue('s'))?.arguments).toEqual({ 'x-queue-type': 'quorum' });
    expect(byName.get(n.instanceEventQueue('s', 'i1'))).toEqual({ exclusive: true, autoDelete: true, durable: false });
  });

  it('declares no delivery limit on classic queues, which count no deliveries', () => {
    const t = serviceTopology(n, { ...input, queueType: 'classic', deliveryLimit: 7 });
    expect(t.queues.every((q) => !('x-delivery-limit' in (q.options.arguments ?? {})))).toBe(true);
  });
});
