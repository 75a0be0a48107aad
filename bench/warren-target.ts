/** Warren target: an RpcClient in a caller process against a Warren service in a child process. */
import amqp from 'amqplib';
import { names, type ClientOptions } from '@warren/amqp';
import { AMQP_URL, spawnServer, uniqueName } from './amqp-baseline';
import { spawnCaller, type LoadDriver } from './caller-process';
import type { BenchSession, BenchTarget } from './harness';

type ReplyMode = NonNullable<ClientOptions['replyMode']>;

/**
 * `base`: a checkout of another commit (with its own `npm ci`) whose packages run instead of this
 * tree's, under this tree's bench programs (children.ts), so a before/after comparison is made inside
 * one run (`BENCH_BASE_TREE`, see rpc-bench.ts).
 */
export function warrenTarget(opts: { tracking: boolean; awaitClaim?: 'always'; replyMode?: ReplyMode; base?: string }): BenchTarget {
  const tracking = opts.tracking ? (opts.awaitClaim === 'always' ? '+tracking-await' : '+tracking') : '';
  const name = `warren${opts.replyMode === 'direct' ? '-direct' : ''}${tracking}${opts.base === undefined ? '' : '@base'}`;
  return {
    name,
    async start(): Promise<BenchSession> {
      const namespace = uniqueName('bench-warren').replace(/[^A-Za-z0-9_.-]/g, '');
      const server = await spawnServer('warren-server', opts.tracking ? [namespace, opts.awaitClaim === 'always' ? 'tracking-await' : 'tracking'] : [namespace], 20_000, opts.base);
      let driver: LoadDriver;
      try {
        driver = await spawnCaller({ kind: 'warren', namespace, replyMode: opts.replyMode ?? 'named', timeoutMs: 10_000 }, 20_000, opts.base);
      } catch (err) {
        await server.stop();
        await deleteNamespace(namespace);
        throw err;
      }
      return {
        serverCpuUs: server.serverCpuUs,
        serverRssMb: server.serverRssMb,
        serverPid: server.pid,
        driver,
        stop: async () => {
          await driver.stop();
          await server.stop();
          await deleteNamespace(namespace);
        },
      };
    },
  };
}

/** The bench declares a namespace per run; leave nothing behind. */
export async function deleteNamespace(namespace: string): Promise<void> {
  const n = names(namespace);
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    for (const q of [n.serviceQueue('bench'), n.deadLetterQueue('bench')]) await ch.deleteQueue(q);
    for (const e of [n.requestExchange, n.eventExchange, n.deadLetterExchange, n.controlExchange, n.discoverExchange, n.cancelExchange]) await ch.deleteExchange(e);
    await ch.close();
  } finally {
    await conn.close();
  }
}
