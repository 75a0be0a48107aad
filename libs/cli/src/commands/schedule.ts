import { ExitCode, type ExitCodeValue } from '../errors';
import { duration, table } from '../format';
import { parseParams } from '../params';
import type { Session } from '../session';
import { callBroker, failed } from './broker-call';

/** One schedule as `schedule.list` answers it (the fields the table shows). */
interface Listed {
  readonly name: string;
  readonly method: string;
  readonly timing: { readonly kind: 'cron'; readonly cron: string; readonly timezone: string } | { readonly kind: 'interval'; readonly everyMs: number };
  readonly overlap: string;
  readonly catchUp: { readonly policy: string; readonly max?: number };
  readonly paused: boolean;
  readonly nextRun?: number;
  readonly state: { readonly lastRun?: { readonly at: number; readonly outcome: string; readonly errorCode?: number } };
}

const what = 'schedule commands are served by the broker: is one running in this namespace?';

const when = (timing: Listed['timing']): string => (timing.kind === 'cron' ? `${timing.cron} (${timing.timezone})` : `every ${duration(timing.everyMs)}`);

/** `warren schedule ls`: every schedule, its last run and outcome, its next run. */
export async function scheduleListCommand(s: Session): Promise<ExitCodeValue> {
  const answer = await callBroker<{ durable: boolean; items: Listed[] }>(s, 'schedule.list', {}, what);
  if (failed(answer)) return answer;
  if (s.settings.json) {
    s.out(JSON.stringify(answer));
    return ExitCode.ok;
  }
  if (answer.items.length === 0) {
    s.out(s.c.dim('no schedules'));
    return ExitCode.ok;
  }
  const now = Date.now();
  const ago = (t: number): string => `${duration(Math.max(0, now - t))} ago`;
  const rows = answer.items.map((i) => {
    const last = i.state.lastRun;
    const outcome = last === undefined ? '-' : last.outcome === 'error' ? `error ${String(last.errorCode ?? '')}`.trim() : last.outcome;
    const next = i.paused ? 'paused' : i.nextRun === undefined ? '-' : `in ${duration(Math.max(0, i.nextRun - now))}`;
    const catchUp = i.catchUp.policy === 'all' ? `all ≤${String(i.catchUp.max)}` : i.catchUp.policy;
    return [i.name, i.method, when(i.timing), i.overlap, catchUp, last === undefined ? '-' : ago(last.at), outcome, next];
  });
  s.out(table(['name', 'method', 'when', 'overlap', 'catch-up', 'last run', 'outcome', 'next run'], rows, s.c));
  if (!answer.durable) s.out(s.c.yellow('not durable: schedules live in the embedded broker\'s memory'));
  return ExitCode.ok;
}

/** The flags of `warren schedule add`. */
export interface AddFlags {
  readonly cron?: string;
  readonly tz?: string;
  readonly every?: number;
  readonly overlap?: string;
  readonly catchUp?: string;
  readonly catchUpMax?: number;
  readonly timeout?: number;
  readonly paused?: boolean;
  readonly replace?: boolean;
  readonly allowUnserved?: boolean;
}

/** `warren schedule add <name> <method> [params...] (--cron expr [--tz zone] | --every ms)`. */
export async function scheduleAddCommand(s: Session, name: string, method: string, words: readonly string[], f: AddFlags): Promise<ExitCodeValue> {
  const params = parseParams(words);
  const answer = await callBroker<{ name: string }>(s, 'schedule.add', {
    name, method, params, cron: f.cron, timezone: f.tz, everyMs: f.every, overlap: f.overlap, catchUp: f.catchUp, catchUpMax: f.catchUpMax, timeoutMs: f.timeout,
    paused: f.paused === true ? true : undefined, replace: f.replace === true ? true : undefined, allowUnserved: f.allowUnserved === true ? true : undefined,
  }, what);
  if (failed(answer)) return answer;
  s.out(s.settings.json ? JSON.stringify(answer) : `${s.c.green('added')} ${answer.name}`);
  return ExitCode.ok;
}

/** `warren schedule rm|pause|resume|run-now <name>`. */
export async function scheduleChangeCommand(s: Session, method: 'schedule.remove' | 'schedule.pause' | 'schedule.resume' | 'schedule.runNow', name: string): Promise<ExitCodeValue> {
  const answer = await callBroker<unknown>(s, method, { name }, what);
  if (failed(answer)) return answer;
  const done = { 'schedule.remove': 'removed', 'schedule.pause': 'paused', 'schedule.resume': 'resumed', 'schedule.runNow': 'fired' }[method];
  const callId = (answer as { callId?: string } | null)?.callId;
  s.out(s.settings.json ? JSON.stringify(answer) : `${s.c.green(done)} ${name}${callId === undefined ? '' : `  call id: ${callId}`}`);
  return ExitCode.ok;
}
