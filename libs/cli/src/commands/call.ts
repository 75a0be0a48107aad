import { readFile } from 'node:fs/promises';
import { RpcClient, type DelayOptions } from '@warren/amqp';
import { InvalidRequestError, RpcNoRouteError, errorResponse, ErrorCode, wireErrorOf, type Id, type JsonValue, type Params, type ResponseMessage } from '@warren/jsonrpc';
import { ExitCode, UsageError, showError, type ExitCodeValue } from '../errors';
import { prettyJson, table } from '../format';
import { explainNoRoute, guardCalls, lookUpServices } from '../availability';
import { progressView } from '../call-progress';
import { parseId, parseParams } from '../params';
import { delayFlags } from '../when';
import type { Session } from '../session';
import { notifyWarning } from './notify-warning';

export interface CallFlags {
  readonly timeout?: number;
  readonly id?: string;
  readonly persistent?: boolean;
  readonly showId?: boolean;
  /** Show the progress the handler reports. @default when stderr is a terminal and --json is off */
  readonly progress?: boolean;
  /** Start at this time (ISO 8601; when.ts). */
  readonly at?: string;
  /** Start after this long (`10m`, `1h30m`, ms; when.ts). */
  readonly in?: string;
}

/** Prints an error: to stdout as a JSON-RPC error object with --json, else `error <code>: <message>` (and a local code) on stderr. */
export function reportError(s: Session, err: unknown, id: Id = null): ExitCodeValue {
  const shown = showError(err);
  if (s.settings.json) {
    s.out(JSON.stringify({ jsonrpc: '2.0', error: { code: shown.code, message: shown.message, ...(shown.data === undefined ? {} : { data: shown.data }) }, id }));
  } else {
    s.err(`${s.c.red(`error ${shown.code}`)}: ${shown.message}${shown.local === undefined ? '' : s.c.dim(` (${shown.local})`)}`);
    const failures = shown.code === ErrorCode.InvalidParams ? schemaFailures(shown.data) : undefined;
    if (failures) for (const line of failures) s.err(`  ${line}`);
    else if (shown.data !== undefined) s.err(prettyJson(shown.data, s.c));
  }
  return shown.exitCode;
}

/**
 * The JSON Schema failures of an Invalid params answer (`data`: `[{path, keyword, message}]`, or an
 * object holding them as `details`, as schedule.add's `params_rejected` does) as lines a person reads,
 * e.g. `params/size: must be <= 600 (maximum)`, `params/color: must be one of "red", "green" (enum)`;
 * undefined for other data.
 */
export function schemaFailures(data: unknown): string[] | undefined {
  if (typeof data === 'object' && data !== null && !Array.isArray(data) && 'details' in data) return schemaFailures(data.details);
  if (!Array.isArray(data) || data.length === 0) return undefined;
  const lines: string[] = [];
  for (const entry of data) {
    if (typeof entry !== 'object' || entry === null) return undefined;
    const { path, keyword, message } = entry as { path?: unknown; keyword?: unknown; message?: unknown };
    if (typeof message !== 'string') return undefined;
    lines.push(`params${typeof path === 'string' ? path : ''}: ${message}${typeof keyword === 'string' ? ` (${keyword})` : ''}`);
  }
  return lines;
}

/** `warren call <method> [params...]`: prints the result as JSON; exits 1 with the error code on an error answer. */
export function callCommand(s: Session, method: string, words: readonly string[], flags: CallFlags): Promise<ExitCodeValue> {
  return callWith(s, method, parseParams(words), flags);
}

/** A call with params already parsed (the REPL parses its own line): prints the answer, or the error with its code and data. */
export async function callWith(s: Session, method: string, params: Params | undefined, flags: CallFlags): Promise<ExitCodeValue> {
  const delay = delayFlags(flags);
  // Always an explicit JSON-RPC id (1 by default); the call id is another thing: nextCallId()
  // shows the random one the next call takes, which --show-id prints.
  const id = flags.id === undefined ? 1 : parseId(flags.id);
  // The directory is read while RabbitMQ connects: a missing service is named without a wait of its own.
  const [client, services] = await Promise.all([s.client({ ...(flags.persistent === undefined ? {} : { persistent: flags.persistent }) }), flags.persistent ? new Map() : lookUpServices(s, [method])]);
  guardCalls(s, client, services);
  if (flags.showId) s.err(`call id: ${client.nextCallId()}`);
  const progress = flags.progress ?? (s.io.stderr.isTTY === true && !s.settings.json) ? progressView(s) : undefined;
  try {
    if (Object.keys(delay).length > 0 && !s.settings.json) s.err(s.c.dim(`waiting until ${dueText(delay)}, then for the answer (leaving does not cancel it)`));
    // A job-style method is sent persistent (docs/protocol.md "Job-style calls may queue") unless --persistent said otherwise.
    const job = flags.persistent === undefined && services.get(method)?.jobStyle === true ? { persistent: true } : {};
    const result = await client.call(method, params, { ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout }), id, ...delay, ...job, ...(progress ? { onProgress: progress.listener } : {}) });
    progress?.done();
    if (s.settings.json) s.out(JSON.stringify({ jsonrpc: '2.0', result, id }));
    else s.out(prettyJson(result, s.c));
    return ExitCode.ok;
  } catch (err) {
    progress?.done();
    if (wireErrorOf(err) === undefined) throw err;
    return reportError(s, await explainNoRoute(s, err), id);
  }
}

/** `warren notify <method> [params...]`: publishes a notification (confirmed by RabbitMQ; nobody answers). */
export function notifyCommand(s: Session, method: string, words: readonly string[], flags: Pick<CallFlags, 'timeout' | 'persistent' | 'at' | 'in'>): Promise<ExitCodeValue> {
  return notifyWith(s, method, parseParams(words), flags);
}

/** A notification with params already parsed. */
export async function notifyWith(s: Session, method: string, params: Params | undefined, flags: Pick<CallFlags, 'timeout' | 'persistent' | 'at' | 'in'>): Promise<ExitCodeValue> {
  const delay = delayFlags(flags);
  const client = await s.client({ ...(flags.persistent === undefined ? {} : { persistent: flags.persistent }) });
  let routed = true;
  try {
    // Over RabbitMQ a notification nobody subscribes to is returned: said, not silently dropped (enqueue.ts).
    await client.notify(method, params, { ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout }), ...delay, ...(client instanceof RpcClient ? { ifUnrouted: 'fail' as const } : {}) });
  } catch (err) {
    if (!(err instanceof RpcNoRouteError)) {
      if (wireErrorOf(err) === undefined) throw err;
      return reportError(s, err);
    }
    routed = false;
  }
  if (!s.settings.json) await notifyWarning(s, method, routed);
  if (!routed) {
    if (s.settings.json) s.out(JSON.stringify({ sent: true, routed: false, method }));
    else s.out(`${s.c.yellow('dropped')} ${method}: no subscriber`);
    return ExitCode.error;
  }
  const due = Object.keys(delay).length > 0 ? dueText(delay) : undefined;
  if (s.settings.json) s.out(JSON.stringify({ sent: true, method, ...(due === undefined ? {} : { dueAt: due }) }));
  else s.out(`${s.c.green('sent')} ${method}${due === undefined ? '' : ` (due ${due})`}`);
  return ExitCode.ok;
}

/** When a delayed message is due, as ISO 8601. */
function dueText(delay: DelayOptions): string {
  const at = delay.delayMs !== undefined ? Date.now() + delay.delayMs : delay.notBefore instanceof Date ? delay.notBefore.getTime() : (delay.notBefore ?? Date.now());
  return new Date(at).toISOString();
}

/** One entry of a batch file: a JSON-RPC request (with `id`) or notification (without). */
interface Entry {
  readonly method: string;
  readonly params?: Params;
  readonly id?: Id;
}

type Parsed = { readonly ok: true; readonly entry: Entry } | { readonly ok: false; readonly response: ResponseMessage };

function parseEntry(raw: unknown): Parsed {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, response: errorResponse(null, ErrorCode.InvalidRequest) };
  const e = raw as Record<string, unknown>;
  const id = e['id'];
  const validId = id === undefined || id === null || typeof id === 'string' || typeof id === 'number';
  if (typeof e['method'] !== 'string' || e['method'] === '' || !validId || (e['params'] !== undefined && (typeof e['params'] !== 'object' || e['params'] === null))) {
    return { ok: false, response: errorResponse(validId && id !== undefined ? (id as Id) : null, ErrorCode.InvalidRequest) };
  }
  return { ok: true, entry: { method: e['method'], ...(e['params'] === undefined ? {} : { params: e['params'] as Params }), ...(id === undefined ? {} : { id: id as Id }) } };
}

/** The text of a file, or of stdin for `-`; a file that cannot be read is a usage error. */
export async function readSource(s: Session, source: string): Promise<string> {
  if (source !== '-') {
    try {
      return await readFile(source, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read ${source}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of s.io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `warren batch <file|->`: sends every entry of a JSON-RPC batch concurrently
 * and prints the responses in request order (notifications have none, as in
 * JSON-RPC). Exits 1 when any entry failed.
 */
export async function batchCommand(s: Session, source: string, flags: Pick<CallFlags, 'timeout' | 'persistent'>): Promise<ExitCodeValue> {
  const text = await readSource(s, source);
  return batchOf(s, text, source === '-' ? 'stdin' : source, flags);
}

/** A batch given as JSON text (`label` names where it came from in a usage error). */
export async function batchOf(s: Session, text: string, label: string, flags: Pick<CallFlags, 'timeout' | 'persistent'>): Promise<ExitCodeValue> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${label} is not JSON`);
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) throw new UsageError('the batch is empty');
  const entries = items.map(parseEntry);
  const calls = entries.flatMap((p) => (p.ok && p.entry.id !== undefined ? [p.entry.method] : []));
  const [client, services] = await Promise.all([s.client({ ...(flags.persistent === undefined ? {} : { persistent: flags.persistent }) }), flags.persistent ? new Map() : lookUpServices(s, calls)]);
  guardCalls(s, client, services);
  const timeout = flags.timeout === undefined ? {} : { timeoutMs: flags.timeout };
  const outcomes = await Promise.all(
    entries.map(async (parsed, index): Promise<{ index: number; method: string; response: ResponseMessage | undefined }> => {
      if (!parsed.ok) return { index, method: '', response: parsed.response };
      const { method, params, id } = parsed.entry;
      try {
        if (id === undefined) {
          await client.notify(method, params, timeout);
          return { index, method, response: undefined };
        }
        const result = await client.call(method, params, { ...timeout, ...(id === null ? {} : { id }) });
        return { index, method, response: { jsonrpc: '2.0', result, id } };
      } catch (err) {
        const e = wireErrorOf(err) ?? new InvalidRequestError(err instanceof Error ? err.message : String(err));
        return { index, method, response: { jsonrpc: '2.0', error: e.toErrorObject(), id: id ?? null } };
      }
    }),
  );
  const responses = outcomes.flatMap((o) => (o.response ? [o.response] : []));
  const failed = responses.some((r) => 'error' in r);
  if (s.settings.json) {
    s.out(JSON.stringify(responses));
  } else {
    const rows = outcomes.map((o) => {
      const r = o.response;
      const outcome = r === undefined ? s.c.dim('(notification sent)') : 'error' in r ? s.c.red(`error ${r.error.code}: ${r.error.message}`) : JSON.stringify(r.result as JsonValue);
      return [String(o.index + 1), r === undefined ? '-' : JSON.stringify(r.id), o.method || s.c.red('(invalid)'), outcome];
    });
    s.out(table(['#', 'id', 'method', 'outcome'], rows, s.c));
  }
  return failed ? ExitCode.error : ExitCode.ok;
}
