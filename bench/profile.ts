/**
 * CPU profiles of the bench's child processes: with `BENCH_PROF=<dir>`, every service and caller
 * process writes a V8 `.cpuprofile` there when it exits (`--cpu-prof`), named by role, so
 * `npm run bench:profile -- <dir>` can say where each process's time per call goes.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `BENCH_NODE_ARGS`: extra `node` flags for every service process (split at spaces), e.g. `--perf-basic-prof`
 * for `perf`, `--trace-gc`, `--log-deopt --logfile=/tmp/v8-%p.log`; services only, since a caller's
 * stdout is its protocol with the bench.
 */
export function nodeArgs(): string[] {
  return (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
}

/** Node flags for a child process of `role`: `BENCH_NODE_ARGS` (services), and with BENCH_PROF set, those that write its CPU profile. */
export function profileArgs(role: 'service' | 'caller'): string[] {
  const extra = role === 'service' ? nodeArgs() : [];
  const dir = process.env['BENCH_PROF'];
  if (!dir) return extra;
  // A directory per process: tsx's loader thread writes a profile of its own beside the main thread's.
  return [...extra, '--cpu-prof', `--cpu-prof-dir=${join(dir, `${String(++spawned).padStart(3, '0')}.${role}`)}`, `--cpu-prof-interval=${PROFILE_INTERVAL_US}`];
}

/** Sampling interval (µs, BENCH_PROF_INTERVAL_US): the default 1 ms sees too few samples of a call that takes tens of µs. */
const PROFILE_INTERVAL_US = Number(process.env['BENCH_PROF_INTERVAL_US'] ?? 100);

/** Numbers the profiled processes in the order they were started. */
let spawned = 0;

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** Self time of one profile, in µs, by function and by the package or part of Node it belongs to. */
export interface ProfileSummary {
  readonly file: string;
  /** Sampled time not spent idle (µs). */
  readonly busyUs: number;
  readonly byGroup: ReadonlyArray<readonly [string, number]>;
  readonly byFunction: ReadonlyArray<readonly [string, number]>;
  /** Time with the function anywhere on the stack (callees included), for functions of the workspace only. */
  readonly inclusive: ReadonlyArray<readonly [string, number]>;
  /** Time by what it was for (see {@link purposeOf}): the nearest frame, from the sample up, that says. */
  readonly byPurpose: ReadonlyArray<readonly [string, number]>;
}

/**
 * What a frame's time is for, or undefined when the frame does not say (Node internals, V8 builtins,
 * promise machinery): the first frame that says, walking up from a sample, names the sample's purpose,
 * so a socket write under ioredis counts as tracking and one under the AMQP connection as AMQP.
 */
export function purposeOf(frame: CallFrame): string | undefined {
  const group = groupOf(frame);
  if (group === 'gc') return 'garbage collection';
  if (group === 'ioredis' || group === '@warren/inflight' || group === '@warren/calls') return 'tracking (tracker, ioredis, Redis socket)';
  if (group === 'amqplib' || group === '@warren/amqp-transport') return 'AMQP (amqplib, socket reads and writes)';
  if (group === '@warren/jsonrpc' || group === 'secure-json-parse' || group === 'ajv') return 'JSON-RPC (decode, dispatch, validate, encode)';
  if (group.startsWith('@warren/')) return `Warren runtime (${group})`;
  if (frame.url.includes('/bench/')) return 'bench driver';
  return undefined;
}

/** Which bucket a frame's self time counts in: a workspace package, an npm package, Node, V8, GC. */
export function groupOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(program)') return 'v8 (program)';
    if (functionName === '(idle)') return 'idle';
    return `native ${functionName}`;
  }
  const workspace = /\/(libs|broker|services)\/([^/]+)\//.exec(url);
  if (workspace && !url.includes('node_modules')) return `@warren/${workspace[2]}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url.slice(url.lastIndexOf('node_modules/')));
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url.split('/').slice(-2).join('/');
}

function frameName(frame: CallFrame): string {
  const file = frame.url.split('/').slice(-2).join('/');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

export function summarizeProfile(file: string): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [leaf, us] of self) {
    const seen = new Set<string>();
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (!frame || !groupOf(frame).startsWith('@warren/')) continue;
      const name = frameName(frame);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const purposes = new Map<string, number>();
  for (const [leaf, us] of self) {
    let purpose: string | undefined;
    for (let id: number | undefined = leaf; id !== undefined && purpose === undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (frame) purpose = purposeOf(frame);
    }
    const frame = byId.get(leaf)?.callFrame;
    if (frame && groupOf(frame) === 'idle') continue;
    const key = purpose ?? 'Node and V8 (event loop, streams, promises, startup)';
    purposes.set(key, (purposes.get(key) ?? 0) + us);
  }
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const group = groupOf(frame);
    if (group === 'idle') continue;
    busy += us;
    groups.set(group, (groups.get(group) ?? 0) + us);
    const name = frameName(frame);
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>): Array<[string, number]> => [...m].sort((a, b) => b[1] - a[1]);
  return { file, busyUs: busy, byGroup: sorted(groups), byFunction: sorted(functions), inclusive: sorted(inclusive), byPurpose: sorted(purposes) };
}

/** The main thread's profile of every process profiled into `dir` (the largest of its directory), in start order. */
export function profilesIn(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((process) => {
    const files = readdirSync(join(dir, process)).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, process, f));
    const largest = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
    return largest === undefined ? [] : [largest];
  });
}
