/**
 * `npm run bench:scaling`: calls/s of Warren with 1, 2 and 4 worker
 * processes, on 1 and on 3 RabbitMQ nodes, and the CPU each call costs (the
 * caller, the workers, RabbitMQ). The nodes are extra ones this script starts
 * on this machine (libs/testkit RabbitCluster: needs root and Debian's
 * rabbitmq-server), one set at a time, never the machine's own node. On 3
 * nodes the caller is on the first node and worker i on node i mod 3, so
 * requests and replies cross nodes, and the queue is a quorum queue (the
 * default for a connection that names several nodes); on 1 node it is classic.
 * Not a test: figures for docs/scaling.md. Rerun it on a quiet machine.
 *
 * Options: --nodes 1,3  --workers 1,2,4  --calls 3000  --warmup 500  --concurrency 64
 *          --queue-type classic|quorum (override the default on every node count)
 *          --json <file> (also write the results there)
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { RpcClient } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { RabbitCluster, spawnTs, type TsChild } from '@warren/testkit';
import { processCpuUs } from './proc-stats';

interface Row {
  readonly nodes: number;
  readonly workers: number;
  readonly queueType: string;
  readonly calls: number;
  readonly errors: number;
  readonly callsPerSec: number;
  /** CPU µs per successful call, by process group. */
  readonly cpuUsPerCall: { readonly caller: number; readonly workers: number; readonly rabbit: number; readonly total: number };
}

function options() {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '1,3' },
      workers: { type: 'string', default: '1,2,4' },
      calls: { type: 'string', default: '3000' },
      warmup: { type: 'string', default: '500' },
      concurrency: { type: 'string', default: '64' },
      'queue-type': { type: 'string' },
      json: { type: 'string' },
    },
  });
  const list = (name: string, raw: string): number[] => raw.split(',').map((v) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`--${name}: ${JSON.stringify(v)} is not a positive integer`);
    return n;
  });
  const one = (name: string, raw: string): number => list(name, raw)[0] as number;
  const queueType = values['queue-type'];
  if (queueType !== undefined && queueType !== 'classic' && queueType !== 'quorum') throw new RangeError('--queue-type must be classic or quorum');
  return {
    nodes: list('nodes', values.nodes), workers: list('workers', values.workers), calls: one('calls', values.calls),
    warmup: one('warmup', values.warmup), concurrency: one('concurrency', values.concurrency), queueType, json: values.json,
  };
}

/** `calls` closed-loop calls at `concurrency`; resolves with the errors and the wall time. */
async function load(client: RpcClient, calls: number, concurrency: number): Promise<{ errors: number; seconds: number }> {
  let next = 0;
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, calls) }, async () => {
    while (next < calls) {
      const i = next++;
      const ok = await client.call<number>('scale.add', [i, 1], { timeoutMs: 30_000 }).then((v) => v === i + 1, () => false);
      if (!ok) errors++;
    }
  }));
  return { errors, seconds: (performance.now() - t0) / 1000 };
}

const callerCpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function measure(cluster: RabbitCluster, workers: number, o: ReturnType<typeof options>): Promise<Row> {
  const namespace = `scale-${randomBytes(4).toString('hex')}`;
  const nodes = cluster.nodes;
  const children: TsChild[] = [];
  const connection = new AmqpConnection({ urls: cluster.urls(nodes[0]), connectionName: `${namespace}-caller` });
  try {
    let queueType = '';
    for (let i = 0; i < workers; i++) {
      const child = spawnTs(path.join(__dirname, 'scaling-worker.ts'), [], {
        SCALE_URLS: cluster.urls(nodes[(i + 1) % nodes.length]).join(','), SCALE_NAMESPACE: namespace, ...(o.queueType ? { SCALE_QUEUE_TYPE: o.queueType } : {}),
      });
      children.push(child);
      queueType = (await child.waitForLine(/^ready /, 60_000)).split(' ')[1] ?? '';
    }
    await connection.start();
    const client = await RpcClient.create(connection, { namespace });
    await load(client, o.warmup, o.concurrency);
    const pids = children.map((c) => c.child.pid).filter((p): p is number => p !== undefined);
    const vms = cluster.vmPids();
    const sample = () => ({ caller: callerCpuUs(), workers: pids.reduce((s, p) => s + processCpuUs(p), 0), rabbit: vms.reduce((s, p) => s + processCpuUs(p), 0) });
    const before = sample();
    const { errors, seconds } = await load(client, o.calls, o.concurrency);
    const after = sample();
    await client.close();
    const ok = Math.max(1, o.calls - errors);
    const per = (k: keyof typeof before): number => Math.round((after[k] - before[k]) / ok);
    const cpu = { caller: per('caller'), workers: per('workers'), rabbit: per('rabbit') };
    return { nodes: nodes.length, workers, queueType, calls: o.calls, errors, callsPerSec: Math.round((o.calls - errors) / seconds), cpuUsPerCall: { ...cpu, total: cpu.caller + cpu.workers + cpu.rabbit } };
  } finally {
    await connection.close();
    await Promise.all(children.map((c) => c.kill('SIGTERM')));
    // The queues go with the nodes (stopped and removed after each node count).
  }
}

async function main(): Promise<void> {
  const o = options();
  if (!RabbitCluster.available()) throw new Error('bench:scaling starts its own RabbitMQ nodes: it needs root, the rabbitmq user and Debian\'s rabbitmq-server');
  const rows: Row[] = [];
  console.log(`scaling: ${o.calls} calls (after ${o.warmup} warm-up) at concurrency ${o.concurrency}, workers ${o.workers.join(',')}, nodes ${o.nodes.join(',')}`);
  console.log(`${'nodes'.padStart(5)} ${'workers'.padStart(7)} ${'queue'.padStart(7)} ${'calls/s'.padStart(8)} ${'errors'.padStart(6)}   CPU µs/call: caller workers rabbit total`);
  for (const size of o.nodes) {
    const t0 = Date.now();
    const cluster = await RabbitCluster.start({ size, prefix: 'warren-bench' });
    const stopCluster = (): void => void cluster.stop();
    process.once('SIGINT', stopCluster);
    console.error(`(${size} node${size > 1 ? 's' : ''} up in ${Math.round((Date.now() - t0) / 1000)} s)`);
    try {
      for (const workers of o.workers) {
        const r = await measure(cluster, workers, o);
        rows.push(r);
        const c = r.cpuUsPerCall;
        console.log(`${String(r.nodes).padStart(5)} ${String(r.workers).padStart(7)} ${r.queueType.padStart(7)} ${String(r.callsPerSec).padStart(8)} ${String(r.errors).padStart(6)}   ${String(c.caller).padStart(18)} ${String(c.workers).padStart(7)} ${String(c.rabbit).padStart(6)} ${String(c.total).padStart(5)}`);
      }
    } finally {
      process.off('SIGINT', stopCluster);
      await cluster.stop();
    }
  }
  const result = { at: new Date().toISOString(), options: o, cpus: (await import('node:os')).cpus().length, loadavg: (await import('node:os')).loadavg(), rows };
  console.log(JSON.stringify(result));
  if (o.json) await writeFile(o.json, `${JSON.stringify(result, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
