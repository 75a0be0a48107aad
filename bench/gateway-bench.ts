/**
 * Is the HTTP gateway the bottleneck? `npm run bench:gateway` runs, each in a process of its own: a
 * tracked Warren `add` service (bench/warren-server.ts, calls tracked in Redis), the broker as users run
 * it (gateway-broker.ts: auth on, Redis, defaults), a Warren client caller (caller-process.ts) and
 * autocannon (gateway-load.ts). In interleaved rounds it measures the same number of calls at the same
 * concurrency (a) from the direct client over AMQP and (b) through `POST /rpc` with keep-alive
 * connections, and prints calls/s of each, their ratio per round and its median, the broker's and the
 * service's CPU per call (from /proc and the service's own count), and any non-2xx or failed request.
 *
 *   npm ci --prefix bench/peers     # once: autocannon
 *   npm run bench:gateway -- --rounds 3 --calls 20000 --concurrency 64
 */
import { spawnCaller } from './caller-process';
import { buildChildren } from './children';
import { spawnServer, uniqueName } from './amqp-baseline';
import { spawnBroker } from './gateway-broker';
import { assertAutocannon, checkReply, runAutocannon } from './gateway-load';
import { processCpuUs } from './proc-stats';
import { deleteNamespace } from './warren-target';

interface Phase {
  readonly calls: number;
  readonly callsPerSec: number;
  readonly failed: number;
  readonly brokerUsPerCall: number;
  readonly serviceUsPerCall: number;
  readonly p50Ms: number;
}

interface Round {
  readonly direct: Phase;
  readonly http: Phase;
  readonly ratio: number;
}

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
  assertAutocannon();
  buildChildren([]);
  const namespace = uniqueName('bench-gw').replace(/[^A-Za-z0-9_.-]/g, '');
  // A client token, passed the way users pass it (GATEWAY_TOKENS, then `Authorization: Bearer`).
  const token = `bench-${namespace}`;
  const server = await spawnServer('warren-server', [namespace, 'tracking']);
  const stops: Array<() => Promise<void>> = [() => server.stop()];
  try {
    const broker = await spawnBroker(namespace, token);
    stops.unshift(() => broker.stop());
    const caller = await spawnCaller({ kind: 'warren', namespace, replyMode: 'named', timeoutMs: 10_000 });
    stops.unshift(() => caller.stop());
    await checkReply(broker.url, token);

    // Each phase: the broker's CPU from /proc, the service's from its own count, calls/s from the load's own clock.
    const phase = async (run: () => Promise<{ callsPerSec: number; failed: number; p50Ms: number }>): Promise<Phase> => {
      const broker0 = processCpuUs(broker.pid);
      const service0 = await server.serverCpuUs();
      const r = await run();
      const brokerUs = processCpuUs(broker.pid) - broker0;
      const serviceUs = (await server.serverCpuUs()) - service0;
      return { calls, callsPerSec: r.callsPerSec, failed: r.failed, brokerUsPerCall: brokerUs / calls, serviceUsPerCall: serviceUs / calls, p50Ms: r.p50Ms };
    };
    const direct = (): Promise<Phase> => phase(async () => {
      const m = await caller.measure(concurrency, calls);
      return { callsPerSec: calls / m.seconds, failed: m.errors, p50Ms: m.p50Ms };
    });
    const http = (): Promise<Phase> => phase(async () => {
      const r = await runAutocannon(broker.url, token, concurrency, calls);
      return { callsPerSec: r.callsPerSec, failed: r.non2xx + r.errors + r.timeouts + (calls - r.requests), p50Ms: r.p50Ms };
    });

    console.error(`# warm-up: ${warmup} calls each way`);
    await caller.warmup(concurrency, warmup);
    await runAutocannon(broker.url, token, concurrency, warmup);
    const results: Round[] = [];
    for (let i = 0; i < rounds; i++) {
      // The order turns each round, so neither side always runs on a machine warmed (or slowed) by the other.
      const [d, h] = i % 2 === 0 ? [await direct(), await http()] : await httpFirst(direct, http);
      results.push({ direct: d, http: h, ratio: h.callsPerSec / d.callsPerSec });
      console.error(`# round ${i + 1}: direct ${d.callsPerSec.toFixed(0)}/s, http ${h.callsPerSec.toFixed(0)}/s, ratio ${(h.callsPerSec / d.callsPerSec).toFixed(3)}, broker ${h.brokerUsPerCall.toFixed(1)} µs/call`);
    }
    await checkReply(broker.url, token);
    print(results, concurrency, calls);
    if (results.some((r) => r.direct.failed > 0 || r.http.failed > 0)) process.exitCode = 1;
  } finally {
    for (const stop of stops) await stop().catch((err: unknown) => console.error('stop failed:', err));
    await deleteNamespace(namespace).catch((err: unknown) => console.error('namespace cleanup failed:', err));
  }
}

async function httpFirst(direct: () => Promise<Phase>, http: () => Promise<Phase>): Promise<[Phase, Phase]> {
  const h = await http();
  return [await direct(), h];
}

function print(results: readonly Round[], concurrency: number, calls: number): void {
  const f = (n: number, digits = 0): string => n.toFixed(digits);
  console.log(`\nPOST /rpc (autocannon, ${concurrency} keep-alive connections, pipelining 1) against the direct Warren client (c=${concurrency}), ${calls} calls each, tracked service`);
  console.log('| round | direct calls/s | http calls/s | http ÷ direct | broker µs/call (http) | service µs/call direct / http | p50 ms direct / http | failed direct / http |');
  console.log('|---|---|---|---|---|---|---|---|');
  results.forEach((r, i) => {
    console.log(`| ${i + 1} | ${f(r.direct.callsPerSec)} | ${f(r.http.callsPerSec)} | ${f(r.ratio, 3)} | ${f(r.http.brokerUsPerCall, 1)} | ${f(r.direct.serviceUsPerCall, 1)} / ${f(r.http.serviceUsPerCall, 1)} | ${f(r.direct.p50Ms, 2)} / ${f(r.http.p50Ms, 2)} | ${r.direct.failed} / ${r.http.failed} |`);
  });
  const m = (pick: (r: Round) => number): number => median(results.map(pick));
  console.log(`| median | ${f(m((r) => r.direct.callsPerSec))} | ${f(m((r) => r.http.callsPerSec))} | ${f(m((r) => r.ratio), 3)} | ${f(m((r) => r.http.brokerUsPerCall), 1)} | ${f(m((r) => r.direct.serviceUsPerCall), 1)} / ${f(m((r) => r.http.serviceUsPerCall), 1)} | | |`);
  const ratio = m((r) => r.ratio);
  const brokerUs = m((r) => r.http.brokerUsPerCall);
  console.log(`\n${ratio >= 0.6 ? 'PASS' : 'MISS'} http ÷ direct ≥ 0.6: ${f(ratio, 3)}`);
  console.log(`${brokerUs <= 100 ? 'PASS' : 'MISS'} broker CPU ≤ 100 µs per call: ${f(brokerUs, 1)}`);
  console.log('--- json ---');
  console.log(JSON.stringify({ concurrency, calls, rounds: results }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
