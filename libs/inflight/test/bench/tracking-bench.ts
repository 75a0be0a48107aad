/**
 * Warren with and without in-flight tracking, next to the plain amqplib
 * baselines, on the shared bench harness:
 *
 *   npx tsx libs/inflight/test/bench/tracking-bench.ts [--calls N] [--concurrency 1,64] [--rounds N] [--targets a,b]
 *
 * Each round runs every target once, in turn, so a noisy moment of the
 * machine hits all of them alike; the table has every round, the summary the
 * median per target and the ratio to amqp-named.
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import amqp from 'amqplib';
import { connectClient, names } from '@warren/amqp';
import { amqpUrl, redisUrl, uniqueName } from '@warren/testkit';
import { amqpBaseline, spawnServer } from '../../../../bench/amqp-baseline';
import { benchTarget, formatTable, type BenchResult, type BenchSession, type BenchTarget } from '../../../../bench/harness';

const SERVER_FILE = join(__dirname, 'server.ts');

function warren(tracking: boolean): BenchTarget {
  return {
    name: tracking ? 'warren+tracking' : 'warren',
    async start(): Promise<BenchSession> {
      const namespace = uniqueName('bench-inflight');
      const server = await spawnServer(SERVER_FILE, [namespace, tracking ? 'tracking' : 'plain', namespace]);
      const client = await connectClient({ urls: amqpUrl(), namespace, defaultTimeoutMs: 10_000, maxPending: 100_000 });
      let n = 0;
      return {
        serverCpuUs: server.serverCpuUs,
        call: async () => {
          const a = n++;
          const result = await client.call<number>('add', [a, 1]);
          if (result !== a + 1) throw new Error(`wrong result ${result} for ${a}+1`);
        },
        stop: async () => {
          await client.close();
          await server.stop();
          await cleanup(namespace);
        },
      };
    },
  };
}

async function cleanup(namespace: string): Promise<void> {
  const n = names(namespace);
  const conn = await amqp.connect(amqpUrl());
  try {
    const ch = await conn.createChannel();
    for (const q of [n.serviceQueue('bench'), n.deadLetterQueue('bench')]) await ch.deleteQueue(q);
    for (const e of [n.requestExchange, n.eventExchange, n.deadLetterExchange, n.controlExchange]) await ch.deleteExchange(e);
    await ch.close();
  } finally {
    await conn.close();
  }
  const redis = new Redis(redisUrl());
  try {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1000);
      cursor = next;
      if (batch.length > 0) await redis.unlink(...batch);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Redis' own CPU time so far (user + system), µs. */
async function redisCpuUs(): Promise<number> {
  const redis = new Redis(redisUrl());
  try {
    const info = await redis.info('cpu');
    const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
    return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
  } finally {
    redis.disconnect();
  }
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

async function main(): Promise<void> {
  const calls = Number(arg('--calls', '20000'));
  const rounds = Number(arg('--rounds', '3'));
  const concurrencies = arg('--concurrency', '64').split(',').map(Number);
  const all: Record<string, () => BenchTarget> = {
    'amqp-named': () => amqpBaseline({ reply: 'named' }),
    'amqp-direct': () => amqpBaseline({ reply: 'direct' }),
    warren: () => warren(false),
    'warren+tracking': () => warren(true),
  };
  const names = arg('--targets', Object.keys(all).join(',')).split(',');
  const targets = names.map((n) => {
    const make = all[n];
    if (!make) throw new Error(`unknown target ${n}; known: ${Object.keys(all).join(', ')}`);
    return make;
  });
  const rows: BenchResult[] = [];
  // Redis shares the machine with everything else: its CPU per call is part of the cost of tracking.
  const redisCpu: Record<string, number[]> = {};
  const warmup = Math.min(5000, Math.floor(calls / 4));
  for (let round = 1; round <= rounds; round++) {
    for (const make of targets) {
      const target = make();
      console.error(`# round ${round}: ${target.name}`);
      const before = await redisCpuUs();
      rows.push(...(await benchTarget(target, { concurrencies, callsFor: () => calls, warmupFor: () => warmup })));
      (redisCpu[target.name] ??= []).push((await redisCpuUs() - before) / ((calls + warmup) * concurrencies.length));
    }
  }
  console.log(formatTable(rows));
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  for (const c of concurrencies) {
    const at = (name: string): number => median(rows.filter((r) => r.target === name && r.concurrency === c).map((r) => r.callsPerSec));
    const base = at('amqp-named');
    console.log(`\nc=${c}, median calls/s of ${rounds} round(s):`);
    for (const name of names) console.log(`  ${name.padEnd(16)} ${at(name).toFixed(0).padStart(7)}  ${((at(name) / base) * 100).toFixed(0)}% of amqp-named`);
  }
  console.log('\nRedis CPU µs/call (median; includes warm-up and anything else using that Redis):');
  for (const name of names) console.log(`  ${name.padEnd(16)} ${median(redisCpu[name] ?? []).toFixed(1)}`);
  if (rows.some((r) => r.errors > 0)) process.exitCode = 2;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
