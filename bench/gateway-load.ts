/**
 * The HTTP side of the gateway bench: autocannon (from bench/peers, installed on demand: peer-install.ts) in a
 * process of its own, as an outside load tool would be: `connections` keep-alive connections,
 * pipelining 1, each sending `POST /rpc` with one JSON-RPC `add` request and waiting for its answer,
 * until `amount` requests are answered. And a check of one answer's bytes, done here with fetch.
 */
import { execFile } from 'node:child_process';
import { processCpuUs } from './proc-stats';
import { join } from 'node:path';
import { PEERS_DIR } from './peer-paths';

const autocannonCli = join(PEERS_DIR, 'node_modules', 'autocannon', 'autocannon.js');

/** The request every HTTP call of the load sends (autocannon sends one fixed body); a plain id, like the direct client's. */
const addBody = '{"jsonrpc":"2.0","method":"add","params":[20,22],"id":1}';
/** The checked request: an id beyond 2^53 (a raw id), which must come back digit for digit, and its sum. */
const checkBody = '{"jsonrpc":"2.0","method":"add","params":[20,22],"id":9007199254740993}';
const checkAnswer = { result: 42, idText: '9007199254740993' };

/** What one autocannon run measured. */
export interface HttpRun {
  readonly requests: number;
  readonly seconds: number;
  readonly callsPerSec: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** autocannon's own CPU time during the run (µs; read from /proc while it runs, 0 elsewhere). */
  readonly loadCpuUs: number;
}

/** Runs autocannon against `${url}/rpc` until `amount` requests are answered. */
export function runAutocannon(url: string, token: string, connections: number, amount: number): Promise<HttpRun> {
  const args = [
    autocannonCli, '--json', '--connections', String(connections), '--pipelining', '1', '--amount', String(amount), '--timeout', '10',
    // Its result waits for the next sample tick after the last answer, and its `duration` counts to that tick:
    // at the default 1 s, a 4-second run could read up to a second long. Every 10 ms keeps that error under 1 %.
    '--sampleInt', '10',
    '--method', 'POST', '--headers', 'content-type=application/json', '--headers', `authorization=Bearer ${token}`, '--body', addBody, `${url}/rpc`,
  ];
  return new Promise((resolvePromise, reject) => {
    // Its CPU is read while it runs (a finished process has no /proc entry): the last reading stands.
    let loadCpuUs = 0;
    const sampler = setInterval(() => (loadCpuUs = Math.max(loadCpuUs, child.pid === undefined ? 0 : processCpuUs(child.pid))), 20);
    const child = execFile(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      clearInterval(sampler);
      if (err) return reject(err);
      try {
        resolvePromise({ ...readResult(JSON.parse(stdout) as AutocannonJson), loadCpuUs });
      } catch (parseErr) {
        reject(parseErr instanceof Error ? parseErr : new Error(String(parseErr)));
      }
    });
  });
}

interface AutocannonJson {
  readonly duration: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly requests: { readonly total: number };
  readonly latency: { readonly p50: number; readonly p99: number };
  readonly '2xx': number;
}

function readResult(j: AutocannonJson): Omit<HttpRun, 'loadCpuUs'> {
  // autocannon's `duration` is in seconds, from its start to the sample tick after its last answer (--sampleInt).
  return {
    requests: j['2xx'], seconds: j.duration, callsPerSec: j['2xx'] / j.duration,
    non2xx: j.non2xx, errors: j.errors, timeouts: j.timeouts, p50Ms: j.latency.p50, p99Ms: j.latency.p99,
  };
}

/**
 * Sends an `add` with a big id once and checks the answer byte for byte where it matters: 200,
 * `application/json`, `result` 42 and the id's digits exactly as sent. Throws what was wrong.
 */
export async function checkReply(url: string, token: string): Promise<void> {
  const response = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: checkBody });
  const text = await response.text();
  const ok = response.status === 200
    && (response.headers.get('content-type') ?? '').startsWith('application/json')
    && (JSON.parse(text) as { jsonrpc?: unknown; result?: unknown }).result === checkAnswer.result
    && (JSON.parse(text) as { jsonrpc?: unknown }).jsonrpc === '2.0'
    && new RegExp(`"id"\\s*:\\s*${checkAnswer.idText}[,}]`).test(text);
  if (!ok) throw new Error(`wrong answer from POST /rpc: ${response.status} ${text}`);
}
