/**
 * RPC benchmark entry point:
 *   npm run bench -- [--calls N] [--concurrency 1,64] [--targets a,b] [--warmup N] [--rounds N]
 *
 * Every target runs `--rounds` times at each concurrency, interleaved with the others (see
 * benchRounds). Prints a table (one row per target × concurrency, medians over the rounds), the
 * verdicts against the issues' targets, then `--- json ---` and the JSON results (every round's
 * figures included), which are also written to bench/results/latest.json.
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { AMQP_URL, amqpBaseline } from './amqp-baseline';
import { amqpGuarded } from './amqp-guarded';
import { buildChildren } from './children';
import { peerTarget, preparePeers } from './peer-target';
import { benchRounds, formatTable, summarize, writeJson, type BenchTarget } from './harness';
import { warrenTarget } from './warren-target';
import { formatVerdicts, verdicts } from './verdict';

const baseTree = process.env['BENCH_BASE_TREE'] || undefined;

/** Registry of benchmark targets. Add one line per new target (e.g. 'warren', 'warren+tracking'). */
export const targets: Record<string, () => BenchTarget> = {
  'amqp-direct': () => amqpBaseline({ reply: 'direct' }),
  'amqp-named': () => amqpBaseline({ reply: 'named' }),
  'amqp-guarded': () => amqpGuarded({ reply: 'named', records: 'none' }),
  'amqp-guarded+redis': () => amqpGuarded({ reply: 'named', records: 'claim-and-outcome' }),
  // The floors of the speed issue's two designs (#29): replies by direct reply-to, and one record per quick call.
  'amqp-guarded-direct': () => amqpGuarded({ reply: 'direct', records: 'none' }),
  'amqp-guarded-direct+redis1': () => amqpGuarded({ reply: 'direct', records: 'outcome' }),
  warren: () => warrenTarget({ tracking: false }),
  'warren-direct': () => warrenTarget({ tracking: false, replyMode: 'direct' }),
  'warren+tracking': () => warrenTarget({ tracking: true }),
  // Every call waits for its claim's reply (awaitClaim: 'always'): what first deliveries gain by not waiting.
  'warren+tracking-await': () => warrenTarget({ tracking: true, awaitClaim: 'always' }),
  // The peer frameworks, from bench/peers (installed on demand: peer-install.ts).
  moleculer: () => peerTarget('moleculer'),
  'nestjs-rmq': () => peerTarget('nestjs-rmq'),
  'rabbitmq-client': () => peerTarget('rabbitmq-client'),
  // Before/after in one run: BENCH_BASE_TREE=/path/to/a/checkout of the commit to compare with.
  ...(baseTree === undefined ? {} : {
    'warren@base': () => warrenTarget({ tracking: false, base: baseTree }),
    'warren+tracking@base': () => warrenTarget({ tracking: true, base: baseTree }),
  }),
};

/** What the issues' targets are relative to: plain amqplib with direct reply-to. */
const BASELINE = 'amqp-direct';

export interface BenchArgs {
  /** Measured calls per run; undefined = default per concurrency. */
  calls: number | undefined;
  warmup: number | undefined;
  concurrency: number[];
  targets: string[];
  rounds: number;
  /** Every target's service consumes with this prefetch (AMQP basic.qos). */
  prefetch: number;
}

const USAGE = 'usage: rpc-bench [--calls N] [--warmup N] [--rounds N] [--prefetch N] [--concurrency 1,64] [--targets ' + Object.keys(targets).join(',') + ']';

function positiveInt(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag}: expected a positive integer, got "${v}"\n${USAGE}`);
  return n;
}

export function parseArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { calls: undefined, warmup: undefined, concurrency: [1, 64], targets: Object.keys(targets), rounds: 9, prefetch: 64 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      const v = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '') throw new Error(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    const list = (): string[] => value().split(',').map((s) => s.trim()).filter(Boolean);
    switch (flag) {
      case '--calls': args.calls = positiveInt(flag, value()); break;
      case '--warmup': args.warmup = Number.parseInt(value(), 10) || 0; break;
      case '--concurrency': args.concurrency = list().map((c) => positiveInt(flag, c)); break;
      case '--targets': args.targets = list(); break;
      case '--rounds': args.rounds = positiveInt(flag, value()); break;
      case '--prefetch': args.prefetch = positiveInt(flag, value()); break;
      case '--help': case '-h': console.log(USAGE); process.exit(0); break;
      default: throw new Error(`unknown argument "${arg}"\n${USAGE}`);
    }
  }
  const unknown = args.targets.filter((t) => !(t in targets));
  if (unknown.length > 0) throw new Error(`unknown target(s): ${unknown.join(', ')}\n${USAGE}`);
  return args;
}

// 10,000 at c=1 too (about 4 s a run here): a target idles while the others run, and a run of 2,000 measured
// in good part its processes coming back (rounds of one run scattered from 1.13 to 1.47 of the baseline's p50,
// against 1.06 to 1.26 with 10,000; docs/benchmarks-history.md, "2026-12-02 (third)").
const defaultCalls = 10_000;
// JIT warm-up matters a lot here (c=1 roughly doubles in throughput after a few thousand calls).
const defaultWarmup = (calls: number): number => Math.min(5_000, Math.max(1_000, Math.floor(calls / 5)));
// Later rounds only refill the pipeline and caches after the other targets ran.
const rewarm = (concurrency: number): number => Math.max(200, concurrency * 10);

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const callsFor = (): number => args.calls ?? defaultCalls;
  const warmupFor = (): number => args.warmup ?? defaultWarmup(callsFor());
  console.error(`# broker ${redact(AMQP_URL)}, ${cpus().length} CPUs, node ${process.version}`);

  // The services read it in their own processes (bench/amqp-baseline-server.ts, bench/warren-server.ts).
  process.env['BENCH_PREFETCH'] = String(args.prefetch);
  buildChildren(baseTree === undefined || !args.targets.some((t) => t.endsWith('@base')) ? [] : [baseTree]);
  const runnable = preparePeers(args.targets, process.argv.some((a) => a === '--targets' || a.startsWith('--targets=')));
  const chosen = runnable.flatMap((name) => {
    const factory = targets[name];
    return factory ? [factory()] : [];
  });
  console.error(`# ${chosen.map((t) => t.name).join(', ')}: c=${args.concurrency.join(',')}, ${args.rounds} round(s), prefetch ${args.prefetch}`);
  const rows = await benchRounds(chosen, {
    concurrencies: args.concurrency,
    callsFor,
    warmupFor,
    rewarmFor: rewarm,
    rounds: args.rounds,
    baseline: BASELINE,
    onResult: (r) => console.error(`#   round ${r.round} ${r.target} c=${r.concurrency}: ${r.callsPerSec.toFixed(0)} calls/s, p50 ${r.p50Ms.toFixed(3)} ms, p99 ${r.p99Ms.toFixed(3)} ms, errors ${r.errors}`),
  });
  const results = summarize(rows);

  const checks = verdicts(rows, BASELINE);
  const report = {
    meta: { date: new Date().toISOString(), node: process.version, cpus: cpus().length, broker: redact(AMQP_URL), args },
    results,
    rounds: rows,
    verdicts: checks,
  };
  console.log(formatTable(results));
  console.log(formatVerdicts(checks));
  console.log('--- json ---');
  console.log(JSON.stringify(report, null, 2));
  await writeJson(join(__dirname, 'results', 'latest.json'), report);
  if (results.some((r) => r.errors > 0)) process.exitCode = 2;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
