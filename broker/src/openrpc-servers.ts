import type { OpenRpcServer } from './openrpc';

/**
 * The `servers` of the broker's OpenRPC document: the gateway's `/rpc` once
 * it listens, and each RabbitMQ node the broker connects to, reduced to
 * scheme, host, port and vhost (credentials and query never leave the
 * broker).
 */
export function discoveryServers(gatewayBase: string | undefined, amqpUrls: string | readonly string[] | undefined, namespace: string): OpenRpcServer[] {
  const servers: OpenRpcServer[] = [];
  if (gatewayBase !== undefined) {
    servers.push({ name: 'gateway', url: `${gatewayBase}/rpc`, summary: 'JSON-RPC 2.0 over HTTP POST (docs/gateway.md)' });
  }
  const urls = amqpUrls === undefined ? [] : typeof amqpUrls === 'string' ? [amqpUrls] : amqpUrls;
  urls.forEach((raw, i) => {
    const url = bareAmqpUrl(raw);
    if (url === undefined) return;
    servers.push({
      name: urls.length === 1 ? 'rabbitmq' : `rabbitmq-${i + 1}`,
      url,
      summary: `Publish to exchange ${namespace}.rpc with routing key = method name (docs/protocol.md)`,
      extensions: { 'x-warren-namespace': namespace, 'x-warren-exchange': `${namespace}.rpc` },
    });
  });
  return servers;
}

function bareAmqpUrl(raw: string): string | undefined {
  try {
    const u = new URL(raw);
    if (u.protocol !== 'amqp:' && u.protocol !== 'amqps:') return undefined;
    return `${u.protocol}//${u.host}${u.pathname === '' ? '/' : u.pathname}`;
  } catch {
    return undefined;
  }
}
