import { ErrorCode, answerPayload, decode, errorResponse, type DecodeLimits, type ResponseMessage, type ServableItem } from '@warren/jsonrpc';
import type { CallOptions } from './call-options';
import type { RpcClient } from './client';

/** The two things a relay needs from a client; a gateway can pass its own gate around them. */
export type RelayTarget = Pick<RpcClient, 'request' | 'notify'>;

export interface RelayOptions {
  readonly decodeLimits?: DecodeLimits;
  readonly call?: Omit<CallOptions, 'id'>;
  /** Decides per method whether it may be relayed; refused ones answer `refusal`. @default all allowed */
  readonly allow?: (method: string) => boolean;
}

/**
 * Relays a raw JSON-RPC payload (one message or a batch) from outside
 * RabbitMQ: decodes it at the edge, routes every request and notification
 * to its service, and assembles the answer exactly as a JSON-RPC server
 * would (`null`: answer nothing). Gateways are built on this.
 */
export async function relayPayload(client: RelayTarget, payload: string | Uint8Array, options: RelayOptions = {}): Promise<ResponseMessage | ResponseMessage[] | null> {
  return answerPayload(decode(payload, options.decodeLimits), (item) => relayItem(client, item, options));
}

async function relayItem(client: RelayTarget, item: ServableItem, options: RelayOptions): Promise<ResponseMessage | null> {
  switch (item.kind) {
    case 'request':
      if (options.allow && !options.allow(item.message.method)) return errorResponse(item.message.id, ErrorCode.MethodNotFound);
      return client.request(item.message, options.call);
    case 'notification':
      if (options.allow && !options.allow(item.message.method)) return null;
      // A notification is never answered, not even when publishing it failed.
      await client.notify(item.message.method, item.message.params, options.call ?? {}).catch(() => undefined);
      return null;
  }
}
