// A request that expired in its service queue (RabbitMQ dead-letters it with x-death reason
// `expired`, and no Warren header) never reached a worker: dlq.list says attempts 0, not 1 (issue 27).
import { names } from '@warren/amqp';
import { silentLogger } from '@warren/logger';
import { Teardown } from '@warren/testkit';
import { startEmbedded } from '../../scripts/embedded';

const td = new Teardown();
afterAll(() => td.run());

it('lists an expired dead letter with 0 attempts, a rejected one with its count', async () => {
  const system = await startEmbedded({ GATEWAY_AUTH: 'none', GATEWAY_PORT: '0' }, () => silentLogger(), { instances: [{ name: 'calculator-1', service: 'calculator' }] });
  td.add(() => system.close());
  const n = names('warren');
  const connection = system.bus.connect();
  td.add(() => connection.close());
  const ch = await connection.model?.createConfirmChannel();
  if (!ch) throw new Error('the in-memory connection is not open');
  for (const [reason, count] of [['expired', 1], ['rejected', 3]] as const) {
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'add', params: [1, 2], id: `dead-${reason}` }));
    ch.publish(n.deadLetterExchange, 'calculator', body, {
      correlationId: `dead-${reason}`, contentType: 'application/json', persistent: true,
      headers: { 'x-death': [{ count, reason, queue: n.serviceQueue('calculator'), exchange: n.requestExchange, 'routing-keys': ['add'] }] },
    });
  }
  await ch.waitForConfirms();
  await ch.close();
  const res = await fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"dlq.list","params":{"service":"calculator"},"id":1}' });
  const items = ((await res.json()) as { result: { items: { callId: string; reason: string; attempts: number }[] } }).result.items;
  expect(Object.fromEntries(items.map((i) => [i.callId, [i.reason, i.attempts]]))).toEqual({ 'dead-expired': ['expired', 0], 'dead-rejected': ['rejected', 3] });
});
