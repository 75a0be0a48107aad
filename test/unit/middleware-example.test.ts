// examples/middleware.ts, the example docs/services.md "Middleware" shows, over the in-memory broker:
// the auth middleware refuses a call without a known token (-32001) and hands the caller to the
// handler without the token; the logging middleware logs each call with its outcome.
import { connectClient, startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { MemoryBroker } from '@warren/amqp-transport';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { createLogger } from '@warren/logger';
import { authContext, logCalls, whoami, type Caller } from '../../examples/middleware';

let bus: MemoryBroker;
let service: WarrenService;
let client: RpcClient;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  bus = new MemoryBroker();
  const logger = createLogger({ name: 'whoami', level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  const tokens = new Map<string, Caller>([['t-ada', { user: 'ada', roles: ['admin'] }]]);
  service = await startService({ connection: bus.connect(), namespace: 'mw', name: 'whoami', methods: { whoami }, logger, middleware: [logCalls, authContext((t) => tokens.get(t))] });
  client = await connectClient({ connection: bus.connect(), namespace: 'mw', defaultTimeoutMs: 5000 });
});
afterAll(async () => {
  await client?.close();
  await service?.close();
  await bus?.close();
});

it('gives the handler the caller its token names, the token itself left out (the schema allows no fields)', async () => {
  await expect(client.call('whoami', { token: 't-ada' })).resolves.toEqual({ user: 'ada', roles: ['admin'] });
  expect(lines).toContainEqual(expect.objectContaining({ msg: 'call done', method: 'whoami' }));
});

it.each([[{}], [{ token: 'nope' }], [[1, 2]]])('answers -32001 Unauthorized to %j, and logs the failure', async (params) => {
  const error = await client.call('whoami', params).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(JsonRpcError);
  expect((error as JsonRpcError).code).toBe(ErrorCode.Unauthorized);
  expect(lines).toContainEqual(expect.objectContaining({ msg: 'call failed', method: 'whoami' }));
});
