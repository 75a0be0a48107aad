import type { DeadLetter, DeadLetterDetail } from '@warren/amqp';
import { ExitCode, type ExitCodeValue } from '../errors';
import { duration, prettyJson, table } from '../format';
import type { Session } from '../session';
import { callBroker, failed } from './broker-call';

/** Calls one of the broker's dlq.* methods over RabbitMQ; a missing broker says so. */
function dlq<R>(s: Session, method: string, params: Record<string, unknown>): Promise<R | ExitCodeValue> {
  return callBroker<R>(s, method, params, 'dead-letter commands are served by the broker: is one running in this namespace?');
}


/** `warren dlq ls [--service s] [--offset n] [--limit n]`: dead letters, newest first. */
export async function dlqListCommand(s: Session, flags: { service?: string; offset?: number; limit?: number }): Promise<ExitCodeValue> {
  const answer = await dlq<{ total: number; items: DeadLetter[] }>(s, 'dlq.list', { service: flags.service, offset: flags.offset, limit: flags.limit });
  if (failed(answer)) return answer;
  if (s.settings.json) {
    s.out(JSON.stringify(answer));
    return ExitCode.ok;
  }
  if (answer.items.length === 0) {
    s.out(s.c.dim(answer.total === 0 ? 'no dead letters' : `no dead letters on this page (${answer.total} in all)`));
    return ExitCode.ok;
  }
  const now = Date.now();
  const rows = answer.items.map((d) => [d.id, d.service, d.method, d.reason, d.code === undefined ? '-' : String(d.code), String(d.attempts), `${duration(Math.max(0, now - d.deadLetteredAt))} ago`, `${d.paramsBytes} B`]);
  s.out(table(['id', 'service', 'method', 'reason', 'code', 'attempts', 'dead-lettered', 'params'], rows, s.c, new Set([4, 5, 7])));
  s.out(s.c.dim(`${answer.items.length} of ${answer.total}`));
  return ExitCode.ok;
}

/** `warren dlq show <service> <id>`: one dead letter with its request. */
export async function dlqShowCommand(s: Session, service: string, id: string): Promise<ExitCodeValue> {
  const answer = await dlq<DeadLetterDetail>(s, 'dlq.show', { service, id });
  if (failed(answer)) return answer;
  s.out(s.settings.json ? JSON.stringify(answer) : prettyJson(answer, s.c));
  return ExitCode.ok;
}

/** `warren dlq replay <service> (<id> | --all) [--timeout ms]`: back to the service queue as new calls. */
export async function dlqReplayCommand(s: Session, service: string, id: string | undefined, flags: { all?: boolean; timeout?: number }): Promise<ExitCodeValue> {
  const answer = await dlq<{ replayed: number; callIds?: string[] }>(s, 'dlq.replay', { service, id, all: flags.all === true ? true : undefined, timeoutMs: flags.timeout });
  if (failed(answer)) return answer;
  if (s.settings.json) s.out(JSON.stringify(answer));
  else s.out(`${s.c.green('replayed')} ${answer.replayed}${answer.callIds && answer.callIds.length > 0 ? `  call id${answer.callIds.length > 1 ? 's' : ''}: ${answer.callIds.join(' ')}` : ''}`);
  return ExitCode.ok;
}

/** `warren dlq purge <service>`: empties its dead-letter queue. */
export async function dlqPurgeCommand(s: Session, service: string): Promise<ExitCodeValue> {
  const answer = await dlq<{ purged: number }>(s, 'dlq.purge', { service });
  if (failed(answer)) return answer;
  s.out(s.settings.json ? JSON.stringify(answer) : `${s.c.yellow('purged')} ${answer.purged}`);
  return ExitCode.ok;
}
