/** Warren target: an RpcClient in this process against a Warren service in a child process. */
import { join } from 'node:path';
import amqp from 'amqplib';
import { connectClient, names, type ReplyMode } from '@warren/amqp';
import { AMQP_URL, spawnServer, uniqueName } from './amqp-baseline';
import type { BenchSession, BenchTarget } from './harness';

const SERVER_FILE = join(__dirname, 'warren-server.ts');

export function warrenTarget(opts: { tracking: boolean; replyMode?: ReplyMode }): BenchTarget {
  const name = `warren${opts.replyMode === 'direct' ? '-direct' : ''}${opts.tracking ? '+tracking' : ''}`;
  return {
    name,
    async start(): Promise<BenchSession> {
      const namespace = uniqueName('bench-warren').replace(/[^A-Za-z0-9_.-]/g, '');
      const server = await spawnServer(SERVER_FILE, opts.tracking ? [namespace, 'tracking'] : [namespace]);
      const client = await connectClient({ urls: AMQP_URL, namespace, replyMode: opts.replyMode ?? 'named', defaultTimeoutMs: 10_000, maxPending: 100_000 });
      let n = 0;
      return {
        serverCpuUs: server.serverCpuUs,
        serverRssMb: server.serverRssMb,
        serverPid: server.pid,
        call: async () => {
          const a = n++;
          const result = await client.call<number>('add', [a, 1]);
          if (result !== a + 1) throw new Error(`wrong result ${result} for ${a}+1`);
        },
        stop: async () => {
          await client.close();
          await server.stop();
          await deleteNamespace(namespace);
        },
      };
    },
  };
}

/** The bench declares a namespace per run; leave nothing behind. */
async function deleteNamespace(namespace: string): Promise<void> {
  const n = names(namespace);
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    for (const q of [n.serviceQueue('bench'), n.deadLetterQueue('bench')]) await ch.deleteQueue(q);
    for (const e of [n.requestExchange, n.eventExchange, n.deadLetterExchange, n.controlExchange, n.cancelExchange]) await ch.deleteExchange(e);
    await ch.close();
  } finally {
    await conn.close();
  }
}
