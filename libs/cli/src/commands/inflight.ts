import { setTimeout as wait } from 'node:timers/promises';
import { InflightError, type InflightCall, type InflightView } from '@warren/inflight';
import { ExitCode, UnreachableError, type ExitCodeValue } from '../errors';
import { duration, prettyJson, table } from '../format';
import type { Session } from '../session';

/** Runs a view operation; Redis failures become "unreachable" (exit 3). */
async function viewOp<T>(s: Session, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof InflightError) throw new UnreachableError(s.redisLabel, err.cause ?? err);
    throw err;
  }
}

function render(s: Session, calls: readonly InflightCall[], now: number): string {
  if (calls.length === 0) return s.c.dim('no calls in flight');
  const rows = calls.map((c) => [
    c.callId,
    c.service,
    c.method,
    c.worker,
    String(c.attempt),
    duration(c.ageMs),
    c.deadline > 0 ? duration(c.deadline - now) : '-',
    progressCell(c.progress),
    stateCell(s, c, now),
  ]);
  return table(['call id', 'service', 'method', 'worker', 'attempt', 'age', 'deadline in', 'progress', 'state'], rows, s.c, new Set([4, 5, 6]));
}

/**
 * `running`, `cancelling`, `queued` (waiting in RabbitMQ for a worker: its caller marked it), or
 * `retrying in 2s` (attempt + 1 is due then) for a call waiting in a delay queue.
 */
function stateCell(s: Session, c: InflightCall, now: number): string {
  if (c.cancelRequested) return s.c.yellow('cancelling');
  if (c.state === 'running') return s.c.green('running');
  if (c.state === 'queued') return s.c.cyan('queued');
  const due = c.nextTryAt === undefined ? '' : c.nextTryAt > now ? ` in ${duration(c.nextTryAt - now)}` : ' due now';
  return s.c.yellow(`retrying${due}`);
}

/** `[██████░░░░] 60% rendering page 6` for a call that reported progress, `-` for one that did not. */
export function progressCell(p: InflightCall['progress'], width = 10): string {
  if (p === undefined) return '-';
  const pct = Math.round(p.fraction * 100);
  const filled = Math.round(p.fraction * width);
  const message = p.message === undefined ? '' : ` ${p.message.length > 30 ? `${p.message.slice(0, 29)}…` : p.message}`;
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${pct}%${message}`;
}

export interface InflightFlags {
  readonly watch?: boolean;
  readonly interval: number;
  readonly count?: number;
  readonly service?: string;
}

/**
 * `warren inflight [--watch]`: the calls running now across the cluster, and those waiting in a delay queue for their next attempt,
 * from the in-flight store in Redis (@warren/inflight). With --watch the
 * table is redrawn every --interval ms until Ctrl-C (or --count refreshes);
 * with --json each refresh is one JSON line.
 */
export async function inflightCommand(s: Session, flags: InflightFlags, stop: AbortSignal): Promise<ExitCodeValue> {
  const view = await viewOp(s, () => s.view());
  const filter = flags.service === undefined ? {} : { service: flags.service };
  const redraw = flags.watch === true && s.io.stdout.isTTY === true && !s.settings.json;
  for (let round = 1; ; round++) {
    const calls = await viewOp(s, () => view.list(filter));
    const now = Date.now();
    if (s.settings.json) {
      s.out(JSON.stringify({ at: now, calls }));
    } else {
      // On a terminal, clear and draw again in place; elsewhere (pipes, tests) append each table.
      if (redraw) s.io.stdout.write('\u001b[H\u001b[2J');
      if (flags.watch) s.out(s.c.dim(`${new Date(now).toISOString()}  ${calls.length} in flight  (every ${flags.interval}ms, Ctrl-C to stop)`));
      s.out(render(s, calls, now));
      if (flags.watch && !redraw) s.out('');
    }
    if (!flags.watch || (flags.count !== undefined && round >= flags.count) || stop.aborted) return ExitCode.ok;
    // Node's own abortable wait: it takes its listener off `stop` again each round (one added per round and
    // never removed warned of a leak from the 11th refresh on, and grew for as long as the watch ran).
    await wait(flags.interval, undefined, { signal: stop }).catch(() => undefined);
    if (stop.aborted) return ExitCode.ok;
  }
}

/** `warren status <call-id>`: one call's state (queued/running/retrying/done/failed/cancelled/expired/unknown) and stored outcome. */
export async function statusCommand(s: Session, callId: string): Promise<ExitCodeValue> {
  const status = await viewOp(s, async () => (await s.view()).status(callId));
  if (s.settings.json) {
    s.out(JSON.stringify(status));
    return ExitCode.ok;
  }
  const paint = { done: s.c.green, running: s.c.cyan, queued: s.c.cyan, retrying: s.c.yellow, failed: s.c.red, cancelled: s.c.yellow, expired: s.c.yellow, unknown: s.c.dim }[status.state];
  s.out(`${s.c.bold(callId)}  ${paint(status.state)}`);
  const now = Date.now();
  const rows: [string, string][] = [];
  if (status.service !== undefined) rows.push(['service', status.service]);
  if (status.method !== undefined) rows.push(['method', status.method]);
  if (status.worker !== undefined) rows.push(['worker', status.worker]);
  if (status.attempt !== undefined) rows.push(['attempt', String(status.attempt)]);
  if (status.startedAt !== undefined) rows.push(['started', `${duration(now - status.startedAt)} ago`]);
  if (status.progress !== undefined) rows.push(['progress', `${progressCell(status.progress, 20)}  (${duration(Math.max(0, now - status.progress.at))} ago)`]);
  if (status.nextTryAt !== undefined) rows.push(['next try', status.nextTryAt > now ? `in ${duration(status.nextTryAt - now)}` : 'due now']);
  if (status.deadline !== undefined) rows.push(['deadline', status.deadline > now ? `in ${duration(status.deadline - now)}` : `${duration(now - status.deadline)} ago`]);
  for (const [k, v] of rows) s.out(`  ${s.c.dim(k.padEnd(9))}${v}`);
  if (status.response !== undefined) s.out(`  ${s.c.dim('outcome'.padEnd(9))}${prettyJson('error' in status.response ? { error: status.response.error } : { result: status.response.result }, s.c).replace(/\n/g, '\n           ')}`);
  if (status.state === 'unknown') s.out(s.c.dim('  no record: not taken by a tracked worker yet, never sent, or forgotten'));
  return ExitCode.ok;
}

/** `warren cancel <call-id>`: cancels a running or queued call; its caller gets -32003 Cancelled. */
export async function cancelCommand(s: Session, callId: string): Promise<ExitCodeValue> {
  // The Redis mark first (its answer says what the cancel did), then on the wire, even when Redis failed: a worker in
  // any language hears that on NS.cancel, with or without the in-flight store.
  // With the call's deadline when its record names one: an untracked worker then remembers the cancel until the
  // deadline (docs/protocol.md "Cancellation"), not 60 s. One Redis read; none known (or Redis away) is no deadline.
  const deadline = s.view().then((v) => v.status(callId)).then((st) => st.deadline, () => undefined);
  const onWire = (): Promise<boolean> => Promise.all([s.client(), deadline]).then(([c, d]) => c.cancelOnWire(callId, 'warren cancel', d)).then(() => true, () => false);
  let outcome: Awaited<ReturnType<InflightView['cancel']>>;
  try {
    outcome = await viewOp(s, async () => (await s.view()).cancel(callId));
  } catch (err) {
    await onWire();
    throw err;
  }
  const wire = await onWire();
  if (s.settings.json) {
    s.out(JSON.stringify({ callId, ...outcome, wire }));
    return ExitCode.ok;
  }
  if (!wire) s.err(`${s.c.yellow('note')}: the cancel could not be published on RabbitMQ; only workers tracked in Redis will hear it`);
  switch (outcome.outcome) {
    case 'signalled':
      s.out(`${s.c.green('cancelled')} ${callId}: its worker ${outcome.worker} was told to stop`);
      break;
    case 'marked':
      // No tracked worker holds it: queued, given back, or running on a worker that tracks nothing in Redis (a
      // service in another language, say). Only the wire cancel reaches the last; the mark covers the others.
      s.out(
        wire
          ? `${s.c.green('cancelled')} ${callId}: no tracked worker runs it; a worker running it untracked was told on RabbitMQ to stop, and one that takes it later answers Cancelled without running it`
          : `${s.c.green('cancelled')} ${callId}: no tracked worker runs it; a tracked worker that takes it answers Cancelled without running it`,
      );
      break;
    case 'already-cancelled':
      s.out(`${s.c.yellow('already cancelled')} ${callId}`);
      break;
    case 'finished':
      s.out(`${s.c.yellow('too late')}: ${callId} already finished (${outcome.state})`);
      break;
  }
  return ExitCode.ok;
}
