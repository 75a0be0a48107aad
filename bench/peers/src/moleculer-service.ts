/** Moleculer answering `add`: a `bench` service whose `add` action sums its [a, b] params. */
import { deleteDeclared } from './cleanup.js';
import { sum, type ServeFn } from './contract.js';
import { benchBroker } from './moleculer-broker.js';

export const serve: ServeFn = async (spec) => {
  const { broker, declared } = benchBroker({ url: spec.url, namespace: spec.name, nodeID: `${spec.name}-service`, prefetch: spec.prefetch, timeoutMs: spec.timeoutMs });
  broker.createService({ name: 'bench', actions: { add: (ctx) => sum(ctx.params) } });
  await broker.start();
  return async () => {
    await broker.stop();
    await deleteDeclared(spec.url, declared);
  };
};
