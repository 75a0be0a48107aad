// `npm run soak -- --minutes M --concurrency C`: sustained calls through fault
// proxies to tracked workers in child processes, with connection cuts,
// stalls and worker kills at random intervals (scripts/soak-run.ts). Prints,
// per minute, calls done, errors by code, duplicates (must be 0), lost calls
// (must be 0) and latency; then the total and the whole run as JSON. Exits 1
// if any call ran twice or was lost.
//
// Options: --minutes 5  --concurrency 32  --workers 3  --timeout-ms 10000
//          --fault-every 5-15 (seconds)  --faults cut-client,cut-worker,stall-worker,kill-worker
//          --recover (callWithRecovery: lost replies fetched from the in-flight store)
//          --cluster (a three-node RabbitMQ cluster of extra nodes on this machine, started and
//            removed by the run; faults stop-node,kill-node,kill-worker: see scripts/soak-run.ts)
//          --json <file> (also write the JSON there)
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ensureServices } from './ensure-services';
import { clusterFaults, runSoak, singleNodeFaults, type FaultKind, type SoakReport } from './soak-run';
import { RabbitCluster, amqpUrl, redisUrl } from '@warren/testkit';

const allFaults: readonly FaultKind[] = ['cut-client', 'cut-worker', 'stall-worker', 'kill-worker', 'stop-node', 'kill-node'];

function options(argv: readonly string[]) {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string', default: '5' },
      concurrency: { type: 'string', default: '32' },
      workers: { type: 'string', default: '3' },
      'timeout-ms': { type: 'string', default: '10000' },
      'fault-every': { type: 'string', default: '5-15' },
      faults: { type: 'string' },
      recover: { type: 'boolean', default: false },
      cluster: { type: 'boolean', default: false },
      json: { type: 'string' },
    },
  });
  const num = (name: string, raw: string, min: number): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < min) throw new RangeError(`--${name} must be a number >= ${min}, got ${JSON.stringify(raw)}`);
    return v;
  };
  const [lo = '', hi = lo] = values['fault-every'].split('-');
  const faults = (values.faults ?? (values.cluster ? clusterFaults : singleNodeFaults).join(',')).split(',').filter(Boolean);
  const unknown = faults.filter((f) => !allFaults.includes(f as FaultKind));
  if (unknown.length > 0) throw new RangeError(`--faults: unknown ${unknown.join(', ')} (known: ${allFaults.join(', ')})`);
  return {
    durationMs: Math.round(num('minutes', values.minutes, 0.05) * 60_000),
    concurrency: Math.round(num('concurrency', values.concurrency, 1)),
    workers: Math.round(num('workers', values.workers, 1)),
    timeoutMs: Math.round(num('timeout-ms', values['timeout-ms'], 100)),
    faultEveryMs: [num('fault-every', lo, 0.1) * 1000, num('fault-every', hi, 0.1) * 1000] as const,
    faults: faults as FaultKind[],
    recover: values.recover,
    cluster: values.cluster,
    json: values.json,
  };
}

const errorsText = (e: Record<string, number>): string => Object.entries(e).map(([k, v]) => `${k}:${v}`).join(' ') || '-';
const faultsText = (f: SoakReport['faults']): string => Object.entries(f).map(([k, v]) => `${k}:${v}`).join(' ') || '-';

function row(label: string, r: SoakReport): string {
  return [
    label.padStart(6), String(r.calls).padStart(8), String(r.ok).padStart(8), errorsText(r.errors).padEnd(22), String(r.duplicates).padStart(4),
    String(r.lost).padStart(5), String(r.p50Ms).padStart(6), String(r.p99Ms).padStart(6), String(r.maxMs).padStart(6), `  ${faultsText(r.faults)}`,
  ].join(' ');
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  await ensureServices();
  console.log(`soak: ${o.durationMs / 60_000} min, concurrency ${o.concurrency}, ${o.workers} workers, deadline ${o.timeoutMs} ms, a fault every ${o.faultEveryMs[0] / 1000}-${o.faultEveryMs[1] / 1000} s (${o.faults.join(', ')})${o.recover ? ', callWithRecovery' : ''}${o.cluster ? ', on a three-node cluster' : ''}`);
  console.log(`${'minute'.padStart(6)} ${'calls'.padStart(8)} ${'ok'.padStart(8)} ${'errors by code'.padEnd(22)} ${'dup'.padStart(4)} ${'lost'.padStart(5)} ${'p50ms'.padStart(6)} ${'p99ms'.padStart(6)} ${'maxms'.padStart(6)}   faults`);
  const { json, cluster: onCluster, ...soak } = o;
  let cluster: RabbitCluster | undefined;
  if (onCluster) {
    if (!RabbitCluster.available()) throw new Error('--cluster starts three RabbitMQ nodes of its own: it needs root, the rabbitmq user and Debian\'s rabbitmq-server');
    console.error('starting a three-node RabbitMQ cluster (extra nodes on this machine)');
    cluster = await RabbitCluster.start({ size: 3, prefix: 'warren-soak' });
    console.error(`nodes: ${cluster.nodes.map((n) => `${n.name} (${n.port})`).join(', ')}`);
  }
  // Ctrl-C ends the run early but still prints the summary and cleans up (queues, Redis keys, workers).
  const stop = new AbortController();
  process.once('SIGINT', () => {
    console.error('stopping: finishing the calls in flight, then cleaning up (Ctrl-C again to quit at once)');
    stop.abort();
    process.once('SIGINT', () => process.exit(130));
  });
  const summary = await runSoak({
    ...soak,
    ...(cluster ? { cluster } : {}),
    signal: stop.signal,
    amqpUrl: amqpUrl(),
    redisUrl: redisUrl(),
    onReport: (r) => console.log(row(String(r.period), r)),
    log: (line) => console.error(line),
  }).finally(() => cluster?.stop());
  console.log(row('total', summary.total));
  console.log(`runs repeated after a worker was killed mid-call (taken over, as promised): ${summary.total.rerunsAfterKill}`);
  console.log(`duplicates: ${summary.total.duplicates} (must be 0), lost: ${summary.total.lost} (must be 0): ${summary.pass ? 'PASS' : 'FAIL'}`);
  const text = JSON.stringify(summary, null, 2);
  console.log(text);
  if (json) await writeFile(json, `${text}\n`);
  process.exitCode = summary.pass ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
