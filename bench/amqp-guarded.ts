/**
 * The guarded targets: plain amqplib doing on the wire what Warren does (callers.ts `amqp-guarded`,
 * amqp-guarded-server.ts), with `redis` also keeping the least a Redis call record can be. They
 * measure what Warren's guarantees cost apart from Warren's own code: the ceiling an untracked Warren
 * call can reach on this machine, and the floor of a tracked one.
 */
import type { BenchSession, BenchTarget } from './harness';
import { spawnServer, uniqueName } from './amqp-baseline';
import { spawnCaller, type LoadDriver } from './caller-process';

export function amqpGuarded(opts: { redis: boolean }): BenchTarget {
  return {
    name: opts.redis ? 'amqp-guarded+redis' : 'amqp-guarded',
    async start(): Promise<BenchSession> {
      const run = uniqueName('bench.guarded');
      const exchange = `${run}.requests`;
      const server = await spawnServer('amqp-guarded-server', [exchange, `${run}.svc`, ...(opts.redis ? ['redis', run] : [])]);
      let driver: LoadDriver;
      try {
        driver = await spawnCaller({ kind: 'amqp-guarded', exchange, replyQueue: `${run}.reply`, timeoutMs: 10_000 });
      } catch (err) {
        await server.stop();
        throw err;
      }
      const stop = async (): Promise<void> => {
        try {
          await driver.stop(); // deletes its reply queue
        } finally {
          await server.stop(); // deletes the exchange, its queue and its records
        }
      };
      return { driver, stop, serverCpuUs: server.serverCpuUs, serverRssMb: server.serverRssMb, serverPid: server.pid };
    },
  };
}
