import { Redis } from 'ioredis';
import type { CallOptions, RpcClient } from '@warren/amqp';
import type { Params } from '@warren/jsonrpc';
import { redisUrl, uniqueName } from '@warren/testkit';

/** A key prefix of its own for one test file, and a way to delete every key under it. */
export class TestPrefix {
  readonly prefix = uniqueName('inflight');
  readonly redis = new Redis(redisUrl(), { lazyConnect: false, maxRetriesPerRequest: 1 });

  /** Every key under the prefix. */
  async keys(): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
    return found;
  }

  /** Keys under the prefix that have no TTL (there must be none). */
  async keysWithoutTtl(): Promise<string[]> {
    const all = await this.keys();
    const ttls = await Promise.all(all.map((k) => this.redis.pttl(k)));
    return all.filter((_k, i) => ttls[i] === -1);
  }

  async destroy(): Promise<void> {
    const all = await this.keys();
    if (all.length > 0) await this.redis.del(...all);
    this.redis.disconnect();
  }
}

/**
 * Starts a call and says its call id. The JSON-RPC id is given explicitly:
 * without one, `call` takes a number from the client's counter for the body's
 * id as well, and `nextCallId()` would be one off.
 */
export function startCall<R>(client: RpcClient, method: string, params?: Params, opts: Omit<CallOptions, 'id'> = {}): { callId: string; answer: Promise<R> } {
  const callId = client.nextCallId();
  const answer = client.call<R>(method, params, { ...opts, id: callId });
  // Tests await `answer` later; this keeps an early rejection from counting as unhandled meanwhile.
  answer.catch(() => undefined);
  return { callId, answer };
}
