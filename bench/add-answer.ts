/** The answer of the bench's plain-amqplib "add" services (amqp-baseline-server.ts, amqp-guarded-server.ts): a JSON-RPC response object for a request body. */

interface AddRequest {
  jsonrpc: '2.0';
  method: string;
  params: [number, number];
  id: string | number;
}

function isRequest(v: unknown): v is AddRequest {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  const p = r['params'];
  return (
    r['jsonrpc'] === '2.0' &&
    typeof r['method'] === 'string' &&
    (typeof r['id'] === 'string' || typeof r['id'] === 'number') &&
    Array.isArray(p) && p.length === 2 && typeof p[0] === 'number' && typeof p[1] === 'number'
  );
}

export function respond(body: Buffer): object {
  let req: unknown;
  try {
    req = JSON.parse(body.toString('utf8'));
  } catch {
    return { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null };
  }
  if (!isRequest(req)) return { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null };
  if (req.method !== 'add') return { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: req.id };
  return { jsonrpc: '2.0', result: req.params[0] + req.params[1], id: req.id };
}
