/**
 * The least a Node gateway built on Warren's client can cost per call, for `npm run bench:gateway --
 * --floor` (phase `http@floor`): Node's own `http` server, a constant-time bearer check, and
 * relayPayload over one RpcClient (the JSON-RPC decode, the call, the answer) encoded as the broker
 * encodes it. Nothing else the broker does: no fastify, no security headers, Host/Origin guard, rate
 * limit, metrics, logs, tracing, authorization rule, concurrency gate, queued marks or hang-up
 * cancellation. Not a gateway: a floor to read the broker's CPU per call against.
 *
 *   node bench/dist/gateway-floor.js   (configured like the broker: AMQP_URL, WARREN_NAMESPACE,
 *                                       GATEWAY_PORT, GATEWAY_TOKENS; GET /readyz once connected)
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connectClient, relayPayload } from '@warren/amqp';
import { encodeResponse } from '@warren/jsonrpc';
import { amqpUrl } from '@warren/testkit';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

async function main(): Promise<void> {
  const client = await connectClient({ urls: amqpUrl(), namespace: env('WARREN_NAMESPACE'), defaultTimeoutMs: 10_000, maxPending: 100_000 });
  // The broker compares digests too: equal lengths, whatever the token sent.
  const expected = digest(`Bearer ${env('GATEWAY_TOKENS')}`);
  const answer = (res: ServerResponse, status: number, body?: string): void => {
    if (body === undefined) res.writeHead(status).end();
    else res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  };
  const relay = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'GET' && req.url === '/readyz') return answer(res, 200);
    if (req.method !== 'POST' || req.url !== '/rpc') return answer(res, 404);
    if (!timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) return answer(res, 401);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const response = await relayPayload(client, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), { call: { timeoutMs: 10_000 } });
    if (response === null) answer(res, 204);
    else answer(res, 200, encodeResponse(response));
  };
  const server = createServer((req, res) => {
    relay(req, res).catch(() => answer(res, 500));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(env('GATEWAY_PORT')), '127.0.0.1');
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void client.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
