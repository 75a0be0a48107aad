// What one REPL line does: the CLI's own commands (call, notify, batch, services, inflight,
// status, cancel, dlq) run in the REPL's one session, plus the REPL's methods/refresh/help.
import { reportError, batchCommand, batchOf, callWith, notifyWith } from '../commands/call';
import { dlqListCommand, dlqPurgeCommand, dlqReplayCommand, dlqShowCommand } from '../commands/dlq';
import { cancelCommand, inflightCommand, statusCommand } from '../commands/inflight';
import { servicesCommand } from '../commands/services';
import { ExitCode, UsageError, type ExitCodeValue } from '../errors';
import { table } from '../format';
import type { Session } from '../session';
import type { Catalogue } from './catalogue';
import { lineParams, splitCommand, words } from './line';

/** What the dispatcher needs of the REPL around it. */
export interface ReplState {
  catalogue(): Catalogue;
  /** Reads discovery again; resolves with a line to show. */
  refresh(): Promise<string>;
  /** Ends a running `inflight` (never a watch here) and anything else waiting: the REPL closing. */
  readonly stop: AbortSignal;
}

export const replHelp = `commands (Tab completes commands, methods and param names):
  call METHOD [params]       call a method; params: JSON ('{"a": 1}', '[1, 2]'), words (4 5), or name=value words
  METHOD [params]            the same, for a method discovery lists
  notify METHOD [params]     publish a notification
  batch FILE | batch [JSON]  a JSON-RPC batch from a file or inline: [{"method", "params", "id"}, ...]
  services                   live services, instances, methods
  methods                    the methods discovery lists, with their param names
  refresh                    read discovery again (after a service started)
  inflight [SERVICE]         calls in flight
  status CALL-ID             one call's state and outcome
  cancel CALL-ID             cancel a running or queued call
  dlq ls [SERVICE] | dlq show SERVICE ID | dlq replay SERVICE (ID | --all) | dlq purge SERVICE
  help                       this
  exit                       leave (Ctrl-D too)`;

function one(rest: string, what: string): string {
  const list = words(rest);
  if (list.length !== 1) throw new UsageError(`expected ${what}`);
  return list[0] as string;
}

function methodsTable(s: Session, catalogue: Catalogue): string {
  if (catalogue.methods.length === 0) return s.c.dim('no methods known: is the system running? (refresh reads discovery again)');
  const rows = catalogue.methods.map((m) => [m.name, m.params.join(' '), m.service ?? '', m.description ?? '']);
  return `${table(['method', 'params by name', 'service', 'description'], rows, s.c)}\n${s.c.dim(`${catalogue.methods.length} methods, from ${catalogue.source}`)}`;
}

async function dlq(s: Session, rest: string): Promise<ExitCodeValue> {
  const [verb, ...args] = words(rest);
  switch (verb) {
    case 'ls':
      if (args.length > 1) throw new UsageError('dlq ls [SERVICE]');
      return dlqListCommand(s, args[0] === undefined ? {} : { service: args[0] });
    case 'show':
      if (args.length !== 2) throw new UsageError('dlq show SERVICE ID');
      return dlqShowCommand(s, args[0] as string, args[1] as string);
    case 'replay': {
      if (args.length !== 2) throw new UsageError('dlq replay SERVICE (ID | --all)');
      const all = args[1] === '--all';
      return dlqReplayCommand(s, args[0] as string, all ? undefined : args[1], { all });
    }
    case 'purge':
      return dlqPurgeCommand(s, one(args.join(' '), 'dlq purge SERVICE'));
    default:
      throw new UsageError('dlq ls | show | replay | purge');
  }
}

async function dispatch(s: Session, state: ReplState, line: string): Promise<ExitCodeValue | 'exit'> {
  const { head, rest } = splitCommand(line);
  switch (head) {
    case '':
      return ExitCode.ok;
    case 'exit':
    case 'quit':
      return 'exit';
    case 'help':
      s.out(replHelp);
      return ExitCode.ok;
    case 'call':
    case 'notify': {
      const target = splitCommand(rest);
      if (target.head === '') throw new UsageError(`${head} METHOD [params]`);
      const params = lineParams(target.rest);
      return head === 'call' ? callWith(s, target.head, params, {}) : notifyWith(s, target.head, params, {});
    }
    case 'batch': {
      const text = rest.trim();
      if (text.startsWith('[') || text.startsWith('{')) return batchOf(s, text, 'the batch', {});
      const file = one(rest, 'batch FILE or batch [JSON]');
      if (file === '-') throw new UsageError('in the REPL, give the batch inline or as a file (not -)');
      return batchCommand(s, file, {});
    }
    case 'services':
      return servicesCommand(s, { wait: 0 });
    case 'methods':
      s.out(methodsTable(s, state.catalogue()));
      return ExitCode.ok;
    case 'refresh':
      s.out(await state.refresh());
      return ExitCode.ok;
    case 'inflight': {
      const service = words(rest)[0];
      return inflightCommand(s, { interval: 1000, ...(service === undefined ? {} : { service }) }, state.stop);
    }
    case 'status':
      return statusCommand(s, one(rest, 'status CALL-ID'));
    case 'cancel':
      return cancelCommand(s, one(rest, 'cancel CALL-ID'));
    case 'dlq':
      return dlq(s, rest);
    default:
      if (state.catalogue().methods.some((m) => m.name === head)) return callWith(s, head, lineParams(rest), {});
      throw new UsageError(`unknown command or method ${JSON.stringify(head)}: help lists the commands; call METHOD calls a method discovery does not list`);
  }
}

/** Runs one line; errors of any kind are printed (code and message) and never end the REPL. */
export async function runLine(s: Session, state: ReplState, line: string): Promise<ExitCodeValue | 'exit'> {
  try {
    return await dispatch(s, state, line);
  } catch (err) {
    return reportError(s, err);
  }
}
