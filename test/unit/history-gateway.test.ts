// Each call lands in the outcome history once, whoever writes it (embedded system, nothing running):
// a tracked service's calls by its worker's finish, an untracked service's calls (and calls to a
// method nobody serves) by the gateway relaying them; the broker's own methods (the console reading
// the history) are not recorded.
import { startService } from '@warren/amqp';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { Teardown, waitFor } from '@warren/testkit';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';

const td = new Teardown();
let system: EmbeddedSystem;
afterAll(() => td.run());

beforeAll(async () => {
  system = await startEmbedded({ GATEWAY_PORT: '0', GATEWAY_AUTH: 'none' }, () => silentLogger(), { instances: [{ name: 'calculator-1', service: 'calculator' }] });
  td.add(() => system.close());
  // No tracker: nobody but the gateway sees its calls end.
  const plain = await startService({
    connection: system.bus.connect(), name: 'plain',
    methods: { 'plain.echo': { handler: (p) => p ?? null }, 'plain.fail': { handler: () => { throw new JsonRpcError(-32044, 'plain failure'); } } },
  });
  td.add(() => plain.close());
  await waitFor(() => ['add', 'plain.echo'].every((m) => system.broker.gateway.catalogue.current().methods.has(m)), { message: 'methods announced' });
}, 30_000);

async function rpc(method: string, params?: unknown): Promise<{ result?: unknown; error?: { code: number } }> {
  const res = await fetch(`${system.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  return (await res.json()) as { result?: unknown; error?: { code: number } };
}

type Item = { callId: string; method: string; state: string; code?: number; service?: string; worker?: string };
async function history(params: Record<string, unknown> = {}): Promise<Item[]> {
  return ((await rpc('history.list', { limit: 500, ...params })).result as { items: Item[] }).items;
}

it('records a tracked call by its worker, an untracked one by the gateway, each once, and none of the broker\'s own', async () => {
  expect((await rpc('add', [1, 2])).result).toBe(3);
  expect((await rpc('plain.echo', ['hi'])).result).toEqual(['hi']);
  expect((await rpc('plain.fail')).error?.code).toBe(-32044);
  expect((await rpc('nobody.serves.this')).error?.code).toBe(ErrorCode.MethodNotFound);
  await waitFor(async () => (await history()).length >= 4, { message: 'four calls in the history' });
  const items = await history();
  const byMethod = (m: string): Item[] => items.filter((i) => i.method === m);
  expect(byMethod('add')).toHaveLength(1);
  expect(byMethod('add')[0]).toMatchObject({ state: 'done', service: 'calculator', worker: expect.any(String) });
  expect(byMethod('plain.echo')).toEqual([expect.objectContaining({ state: 'done', service: 'plain' })]);
  expect(byMethod('plain.echo')[0]).not.toHaveProperty('worker');
  expect(byMethod('plain.fail')).toEqual([expect.objectContaining({ state: 'failed', code: -32044, error: expect.objectContaining({ message: 'plain failure' }) })]);
  expect(byMethod('nobody.serves.this')).toEqual([expect.objectContaining({ state: 'failed', code: ErrorCode.MethodNotFound })]);
  expect(items.filter((i) => i.method === 'history.list')).toEqual([]);
  expect(new Set(items.map((i) => i.callId)).size).toBe(items.length);
});
