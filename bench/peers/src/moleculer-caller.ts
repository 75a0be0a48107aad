/** A Moleculer node calling `bench.add` with [a, b], once the service node is discovered. */
import { deleteDeclared } from './cleanup.js';
import { expectSum, type OpenFn } from './contract.js';
import { benchBroker } from './moleculer-broker.js';

export const open: OpenFn = async (spec) => {
  const { broker, declared } = benchBroker({ url: spec.url, namespace: spec.name, nodeID: `${spec.name}-caller`, prefetch: spec.prefetch, timeoutMs: spec.timeoutMs });
  await broker.start();
  await broker.waitForServices('bench', 20_000);
  let n = 0;
  return {
    call: async () => {
      const a = n++;
      expectSum(await broker.call('bench.add', [a, 1]), a, 1);
    },
    stop: async () => {
      await broker.stop();
      // Its own queues only: the service node, still running, unbinds from the shared exchanges when it
      // stops (a missing exchange would fail that), and deletes them then.
      await deleteDeclared(spec.url, { queues: declared.queues, exchanges: [] });
    },
  };
};
