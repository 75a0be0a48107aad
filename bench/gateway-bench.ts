/**
 * Is the HTTP gateway the bottleneck? `npm run bench:gateway` runs, each in a process of its own: a
 * tracked Warren `add` service (bench/warren-server.ts, calls tracked in Redis), the broker as users run
 * it (gateway-broker.ts: auth on, Redis, defaults), a Warren client caller (caller-process.ts) and
 * autocannon (gateway-load.ts). In interleaved rounds it measures the same number of calls at the same
 * concurrency (a) from the direct client over AMQP and (b) through `POST /rpc` with keep-alive
 * connections, and prints calls/s of each, their ratio per round and its median, the broker's, the
 * service's and the load's CPU per call, and any non-2xx or failed request (the run then exits 1).
 * With `BENCH_BASE_TREE=/path/to/checkout` (built by the run; it needs its own `npm ci`), a second
 * broker from that checkout serves the same service, and each round measures through it too: a
 * before/after of the broker inside one run.
 *
 *   npm run bench:gateway -- --rounds 3 --calls 20000 --concurrency 64
 *   npm run bench:gateway -- --no-broker-redis   # the broker without REDIS_URL: what queued marks cost it
 *   npm run bench:gateway -- --floor             # also through gateway-floor.ts: Node's http and Warren's client alone
 */
import { spawnCaller } from './caller-process';
import { buildChildren } from './children';
import { spawnServer, uniqueName } from './amqp-baseline';
import { spawnBroker, type BrokerChild } from './gateway-broker';
import { checkReply, runAutocannon } from './gateway-load';
import { ensurePeers } from './peer-install';
import { processCpuUs } from './proc-stats';
import { deleteNamespace } from './warren-target';

interface Phase {
  readonly callsPerSec: number;
  readonly failed: number;
  readonly brokerUsPerCall: number;
  readonly serviceUsPerCall: number;
  readonly p50Ms: number;
  /** The load's own CPU per call: the caller process's, or autocannon's. */
  readonly loadUsPerCall: number;
}

/** One round: each phase by name (`direct`, `http`, `http@base`, `http@floor`). */
type Round = Record<string, Phase>;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${name} must be a positive integer`);
  return value;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

async function main(): Promise<void> {
  const rounds = option('rounds', 3);
  const calls = option('calls', 20_000);
  const concurrency = option('concurrency', 64);
  const warmup = option('warmup', 2_000);
  const redis = !process.argv.includes('--no-broker-redis');
  const floor = process.argv.includes('--floor');
  const baseTree = process.env['BENCH_BASE_TREE'];
  // autocannon is one of bench/peers' packages: installed when missing or stale, like the peer frameworks.
  ensurePeers();
  buildChildren(baseTree === undefined ? [] : [baseTree]);
  const namespace = uniqueName('bench-gw').replace(/[^A-Za-z0-9_.-]/g, '');
  // A client token, passed the way users pass it (GATEWAY_TOKENS, then `Authorization: Bearer`).
  const token = `bench-${namespace}`;
  const server = await spawnServer('warren-server', [namespace, 'tracking']);
  const stops: Array<() => Promise<void>> = [() => server.stop()];
  try {
    const brokers: Array<[string, BrokerChild]> = [];
    const others: Array<[string, { readonly tree?: string; readonly floor?: boolean }]> = [
      ...(baseTree === undefined ? [] : [['http@base', { tree: baseTree }] as [string, { tree: string }]]),
      ...(floor ? [['http@floor', { floor: true }] as [string, { floor: boolean }]] : []),
    ];
    for (const [name, extra] of [['http', {}], ...others] as const) {
      const broker = await spawnBroker(namespace, token, { redis, ...extra });
      stops.unshift(() => broker.stop());
      await checkReply(broker.url, token);
      brokers.push([name, broker]);
    }
    const caller = await spawnCaller({ kind: 'warren', namespace, replyMode: 'named', timeoutMs: 10_000 });
    stops.unshift(() => caller.stop());

    // Each phase: the brokers' CPU from /proc, the service's from its own count, calls/s from the load's own clock.
    const phase = async (broker: BrokerChild | undefined, run: () => Promise<{ callsPerSec: number; failed: number; p50Ms: number; loadCpuUs: number }>): Promise<Phase> => {
      const broker0 = broker === undefined ? 0 : processCpuUs(broker.pid);
      const service0 = await server.serverCpuUs();
      const r = await run();
      const brokerUs = broker === undefined ? 0 : processCpuUs(broker.pid) - broker0;
      const serviceUs = (await server.serverCpuUs()) - service0;
      return { callsPerSec: r.callsPerSec, failed: r.failed, brokerUsPerCall: brokerUs / calls, serviceUsPerCall: serviceUs / calls, p50Ms: r.p50Ms, loadUsPerCall: r.loadCpuUs / calls };
    };
    const phases: Array<[string, () => Promise<Phase>]> = [
      ['direct', () => phase(undefined, async () => {
        const m = await caller.measure(concurrency, calls);
        return { callsPerSec: calls / m.seconds, failed: m.errors, p50Ms: m.p50Ms, loadCpuUs: m.cpuUs };
      })],
      ...brokers.map(([name, broker]): [string, () => Promise<Phase>] => [name, () => phase(broker, async () => {
        const r = await runAutocannon(broker.url, token, concurrency, calls);
        return { callsPerSec: r.callsPerSec, failed: r.non2xx + r.errors + r.timeouts + (calls - r.requests), p50Ms: r.p50Ms, loadCpuUs: r.loadCpuUs };
      })]),
    ];

    console.error(`# warm-up: ${warmup} calls each way`);
    await caller.warmup(concurrency, warmup);
    for (const [, broker] of brokers) await runAutocannon(broker.url, token, concurrency, warmup);
    const results: Round[] = [];
    for (let i = 0; i < rounds; i++) {
      // The order turns each round, so no side always runs on a machine warmed (or slowed) by another.
      const round: Round = {};
      for (let k = 0; k < phases.length; k++) {
        const [name, run] = phases[(i + k) % phases.length]!;
        round[name] = await run();
      }
      results.push(round);
      console.error(`# round ${i + 1}: ${phases.map(([name]) => `${name} ${round[name]!.callsPerSec.toFixed(0)}/s${name === 'direct' ? '' : ` ${round[name]!.brokerUsPerCall.toFixed(0)} µs/call`}`).join(', ')}`);
    }
    for (const [, broker] of brokers) await checkReply(broker.url, token);
    print(results, phases.map(([name]) => name), concurrency, calls);
    if (results.some((r) => Object.values(r).some((p) => p.failed > 0))) process.exitCode = 1;
  } finally {
    for (const stop of stops) await stop().catch((err: unknown) => console.error('stop failed:', err));
    await deleteNamespace(namespace).catch((err: unknown) => console.error('namespace cleanup failed:', err));
  }
}

function print(results: readonly Round[], names: readonly string[], concurrency: number, calls: number): void {
  const f = (n: number, digits = 0): string => n.toFixed(digits);
  const m = (pick: (r: Round) => number): number => median(results.map(pick));
  const get = (r: Round, name: string): Phase => r[name]!;
  console.log(`\nPOST /rpc (autocannon, ${concurrency} keep-alive connections, pipelining 1) against the direct Warren client (c=${concurrency}), ${calls} calls each, tracked service; medians of ${results.length} rounds`);
  console.log('| phase | calls/s | ÷ direct (median of rounds) | broker µs/call | service µs/call | load µs/call (caller or autocannon) | p50 ms | failed (all rounds) |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const name of names) {
    const failed = results.reduce((sum, r) => sum + get(r, name).failed, 0);
    const ratio = name === 'direct' ? '' : f(m((r) => get(r, name).callsPerSec / get(r, 'direct').callsPerSec), 3);
    console.log(`| ${name} | ${f(m((r) => get(r, name).callsPerSec))} | ${ratio} | ${name === 'direct' ? '' : f(m((r) => get(r, name).brokerUsPerCall), 1)} | ${f(m((r) => get(r, name).serviceUsPerCall), 1)} | ${f(m((r) => get(r, name).loadUsPerCall), 1)} | ${f(m((r) => get(r, name).p50Ms), 2)} | ${failed} |`);
  }
  console.log('per round, http ÷ direct: ' + results.map((r) => f(get(r, 'http').callsPerSec / get(r, 'direct').callsPerSec, 3)).join(', '));
  const ratio = m((r) => get(r, 'http').callsPerSec / get(r, 'direct').callsPerSec);
  const brokerUs = m((r) => get(r, 'http').brokerUsPerCall);
  console.log(`\n${ratio >= 0.6 ? 'PASS' : 'MISS'} http ÷ direct ≥ 0.6: ${f(ratio, 3)}`);
  console.log(`${brokerUs <= 100 ? 'PASS' : 'MISS'} broker CPU ≤ 100 µs per call: ${f(brokerUs, 1)}`);
  if (names.includes('http@floor')) console.log(`INFO broker CPU per call ÷ the floor's (gateway-floor.ts), median of rounds: ${f(m((r) => get(r, 'http').brokerUsPerCall / get(r, 'http@floor').brokerUsPerCall), 3)}`);
  if (names.includes('http@base')) console.log(`INFO broker CPU per call ÷ base, median of rounds: ${f(m((r) => get(r, 'http').brokerUsPerCall / get(r, 'http@base').brokerUsPerCall), 3)}`);
  console.log('--- json ---');
  console.log(JSON.stringify({ concurrency, calls, rounds: results }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
