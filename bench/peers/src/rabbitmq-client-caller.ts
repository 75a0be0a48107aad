/**
 * rabbitmq-client's RPCClient (direct reply-to; publisher confirms off, its default, as in the
 * baseline) calling the service's queue with [a, b] as a JSON body.
 */
import { Connection } from 'rabbitmq-client';
import { expectSum, type OpenFn } from './contract.js';

export const open: OpenFn = async (spec) => {
  const rabbit = new Connection({ url: spec.url, noDelay: true });
  await rabbit.onConnect(10_000);
  const client = rabbit.createRPCClient({ timeout: spec.timeoutMs });
  const queue = `${spec.name}.add`;
  let n = 0;
  return {
    call: async () => {
      const a = n++;
      const res = await client.send(queue, [a, 1]);
      expectSum((res.body as { result?: unknown } | null)?.result, a, 1);
    },
    stop: async () => {
      await client.close();
      await rabbit.close();
    },
  };
};
