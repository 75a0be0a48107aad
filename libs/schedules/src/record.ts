import type { Fired } from './fire';
import type { ScheduleState, ScheduleStore } from './store-port';

/** The state once a fired call is under way: it is the last run, and the running call the overlap policies read. */
export function startedState(state: ScheduleState, fired: Fired, timeoutMs: number, occurrence: number | undefined): ScheduleState {
  return {
    ...state,
    lastRun: { ...(occurrence === undefined ? { manual: true } : { occurrence }), callId: fired.callId, at: fired.at, outcome: 'running' },
    running: { callId: fired.callId, until: fired.at + timeoutMs },
  };
}

/**
 * Records how a fired call ended, once it has: its outcome on the last run (if it still is the
 * last), and the schedule no longer running. A schedule removed meanwhile stays removed.
 */
export async function recordEnd(store: ScheduleStore, name: string, fired: Fired): Promise<void> {
  // The message is for the log line (failures.ts); the record keeps the code, as schedule.list shows it.
  const { errorMessage: _logged, ...end } = await fired.ended;
  if ((await store.get(name)) === undefined) return;
  const state = (await store.states([name])).get(name) ?? {};
  const { running, ...rest } = state;
  const next: ScheduleState = {
    ...rest,
    ...(running !== undefined && running.callId !== fired.callId ? { running } : {}),
    ...(state.lastRun?.callId === fired.callId ? { lastRun: { ...state.lastRun, ...end } } : {}),
  };
  await store.setState(name, next);
}
