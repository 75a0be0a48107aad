// The calculator as it runs in production: its main.ts in child processes,
// called over the real RabbitMQ.
import { connectClient, type RpcClient } from '@warren/amqp';
import { ErrorCode, InvalidParamsError, RpcNoRouteError } from '@warren/jsonrpc';
import { InflightView } from '@warren/inflight';
import { Teardown, amqpUrl, redisUrl, type TsChild } from '@warren/testkit';
import { TestNamespace } from '../../../test/support/amqp';
import { deleteRedisKeys, startServiceProcess, waitForLog } from '../../../test/integration/helpers';

const td = new Teardown();
const ns = new TestNamespace();
let client: RpcClient;
const instances: TsChild[] = [];

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => deleteRedisKeys(`${ns.namespace}:`));
  ns.service('calculator');
  for (const id of ['calc-a', 'calc-b']) instances.push(await startServiceProcess(td, 'calculator', { WARREN_NAMESPACE: ns.namespace, INSTANCE_ID: id, PREFETCH: '4' }));
  client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 5000 });
  td.add(() => client.close());
}, 60_000);
afterAll(() => td.run());

describe('calculator over RabbitMQ', () => {
  it('answers add, subtract (by position and by name), sum and get_data', async () => {
    await expect(client.call('add', [4, 5])).resolves.toBe(9);
    await expect(client.call('subtract', [42, 23])).resolves.toBe(19);
    await expect(client.call('subtract', { subtrahend: 23, minuend: 42 })).resolves.toBe(19);
    await expect(client.call('sum', [1, 2, 4])).resolves.toBe(7);
    await expect(client.call('get_data')).resolves.toEqual(['hello', 5]);
  });

  it('evaluates expressions with the calculate tool, as text', async () => {
    await expect(client.call('calculate', { expression: '1+3+6' })).resolves.toBe('10');
    await expect(client.call('calculate', { expression: '(2+3)*-4 % 7' })).resolves.toBe('-6');
  });

  it('fails a malformed expression with -32602 and the parser message', async () => {
    const err = await client.call('calculate', { expression: '1/(' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidParamsError);
    expect(err).toMatchObject({ code: ErrorCode.InvalidParams, data: { expression: '1/(', position: 3 } });
    expect((err as Error).message).toMatch(/end of expression/);
  });

  it('validates params by JSON Schema and fails unknown methods with RPC_NO_ROUTE (-32601)', async () => {
    await expect(client.call('add', ['four', 5])).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    await expect(client.call('subtract', { minuend: 1 })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    await expect(client.call('multiply', [2, 3], { timeoutMs: 2000 })).rejects.toBeInstanceOf(RpcNoRouteError);
  });

  it('spreads calls over both instances of the pool, each tracked in Redis (REDIS_URL is set)', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => client.call('add', [i, 1])));
    expect(results).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const view = new InflightView({ redis: redisUrl(), keyPrefix: ns.namespace });
    td.add(() => view.close());
    const workers = new Set<string>();
    for (let i = 0; i < 10; i++) {
      // With an explicit id, nextCallId() names the call id the call will get.
      const callId = client.nextCallId();
      await client.call('add', [i, i], { id: i + 1 });
      const status = await view.status(callId);
      expect(status).toMatchObject({ state: 'done', method: 'add', service: 'calculator', response: { result: 2 * i } });
      workers.add(status.worker ?? '');
    }
    expect([...workers].sort()).toEqual(['calc-a', 'calc-b']);
  });

  it('shuts down gracefully on SIGTERM: closes the service and exits 0, the other instance keeps serving', async () => {
    const victim = instances[0] as TsChild;
    const exit = await victim.kill('SIGTERM');
    expect(exit.code).toBe(0);
    await waitForLog(victim, 'service closed').catch(() => undefined);
    expect(victim.stdout.some((l) => l.includes('"msg":"service closed"'))).toBe(true);
    await expect(client.call('add', [1, 1])).resolves.toBe(2);
  });
});
