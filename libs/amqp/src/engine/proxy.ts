import type { JsonValue } from '@warren/jsonrpc';
import type { RpcProxy } from './call-options';

/**
 * A typed stand-in for a remote API (`RpcClient.proxy`): each property read is a function calling
 * `<prefix>.<property>` with its arguments as params by position. `then` reads as undefined, so a
 * proxy is never taken for a promise.
 *
 * @example rpcProxy<MathApi>((m, args) => client.call(m, args), 'math').add(1, 2) // calls math.add [1, 2]
 */
export function rpcProxy<T extends object>(call: (method: string, args: JsonValue[]) => Promise<unknown>, prefix?: string): RpcProxy<T> {
  return new Proxy({} as RpcProxy<T>, {
    get: (_target, property) => {
      if (typeof property !== 'string' || property === 'then') return undefined;
      const method = prefix ? `${prefix}.${property}` : property;
      return (...args: JsonValue[]) => call(method, args);
    },
  });
}
