// What the tracker's unit tests share: a StoreCallTracker over a scripted store (fake-store.ts)
// under fake timers, its log, and calls to feed it.
import type { RunningCall } from '@warren/calls';
import type { ResponseMessage } from '@warren/jsonrpc';
import { createLogger } from '@warren/logger';
import { StoreCallTracker, type Decision } from '../src/call-tracker';
import type { TrackerOptions } from '../src/options';
import { FakeStore } from './fake-store';

let lines: { level: number; msg: string }[] = [];
export const logger = () => createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) } });
export const warnings = (): string[] => lines.filter((l) => l.level >= 40).map((l) => l.msg);
/** Every line logged since the tracker started, for tests that look past warnings. */
export const logged = (): readonly { level: number; msg: string }[] => lines;

let seq = 0;
export const call = (over: Partial<RunningCall> = {}): RunningCall => ({
  callId: `c${++seq}`, id: seq, method: 'work', service: 'svc', worker: 'me', attempt: 1, deadline: Date.now() + 10_000, startedAt: Date.now(), ...over,
});
export const ok = (id: number): ResponseMessage => ({ jsonrpc: '2.0', result: 'ok', id });
export const running = 0;

/** The options every test's tracker starts with (a test may start another with its own). */
export const baseOptions: TrackerOptions = { leaseMs: 3000, heartbeatMs: 1000, waitPollMs: 100 };

/** Fake timers on, the log emptied, and a tracker started over a fresh scripted store. */
export async function startTracker(options: TrackerOptions = baseOptions): Promise<{ store: FakeStore; tracker: StoreCallTracker }> {
  jest.useFakeTimers();
  lines = [];
  const store = new FakeStore();
  const tracker = new StoreCallTracker({ ...options, logger: logger() }, store);
  await tracker.start({ service: 'svc', instanceId: 'me', running: () => running });
  return { store, tracker };
}

export async function stopTracker(tracker: StoreCallTracker): Promise<void> {
  await tracker.stop();
  jest.useRealTimers();
}

export function expectRun(d: Decision): Extract<Decision, { action: 'run' }> {
  if (d.action !== 'run') throw new Error(`expected run, got ${d.action}`);
  return d;
}
