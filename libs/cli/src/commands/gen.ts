// `warren gen`: typed clients (TypeScript, Python) from the OpenRPC document of a live system
// (rpc.discover, over RabbitMQ or the gateway) or a saved one, written to disk or, with --check,
// compared with what is on disk so CI can fail on a stale client.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import { CliError, ExitCode, UsageError, type ExitCodeValue } from '../errors';
import { apiModel, compare } from '../gen/api-model';
import { pythonClient } from '../gen/python';
import { typescriptClient } from '../gen/typescript';
import { brokerServices, selectApi } from '../gen/select';
import type { Session } from '../session';
import { readSource } from './call';

export interface GenFlags {
  /** A saved OpenRPC document (or `-` for stdin). @default the live system's rpc.discover */
  readonly from?: string;
  readonly ts?: string;
  readonly python?: string;
  /** Also write the document used, without what changes from run to run (servers, instance counts). */
  readonly openrpc?: string;
  /** Compare instead of writing; exit 1 when any file differs. */
  readonly check?: boolean;
  readonly timeout?: number;
  /** Only these services' methods and notifications (`--service`, repeatable). @default every service */
  readonly service?: readonly string[];
  /** Keep the broker's operator methods (workers.*, dlq.*, schedule.*...). @default false */
  readonly operatorMethods?: boolean;
}

/** What the headers of the generated files name as their maker: no paths or flags, so a check from anywhere agrees. */
const maker = 'warren gen';

export async function genCommand(s: Session, flags: GenFlags): Promise<ExitCodeValue> {
  if (flags.ts === undefined && flags.python === undefined && flags.openrpc === undefined) throw new UsageError('name at least one output: --ts FILE, --python FILE or --openrpc FILE');
  const doc = flags.from === undefined ? await discover(s, flags.timeout) : parse(await readSource(s, flags.from), flags.from);
  const { model, operatorLeftOut } = selectApi(apiModel(doc), brokerServices(doc), { ...(flags.service === undefined ? {} : { services: flags.service }), operatorMethods: flags.operatorMethods === true });
  const outputs: [string, string][] = [];
  if (flags.ts !== undefined) outputs.push([flags.ts, typescriptClient(model, maker)]);
  if (flags.python !== undefined) outputs.push([flags.python, pythonClient(model, maker)]);
  if (flags.openrpc !== undefined) outputs.push([flags.openrpc, savedDocument(doc)]);
  const summary = `${model.methods.length} methods, ${model.notifications.length} notifications${operatorLeftOut === 0 ? '' : `; ${operatorLeftOut} operator methods left out (--operator-methods)`}`;
  if (flags.check) {
    const stale: string[] = [];
    for (const [file, text] of outputs) if ((await readFile(file, 'utf8').catch(() => undefined)) !== text) stale.push(file);
    if (s.settings.json) s.out(JSON.stringify({ upToDate: stale.length === 0, stale, checked: outputs.map(([f]) => f) }));
    else {
      for (const [file] of outputs) {
        if (stale.includes(file)) s.err(`${s.c.red('stale')} ${file}: run warren gen again without --check`);
        else s.out(`up to date ${file} (${summary})`);
      }
    }
    return stale.length === 0 ? ExitCode.ok : ExitCode.error;
  }
  for (const [file, text] of outputs) {
    await mkdir(path.dirname(path.resolve(file)), { recursive: true });
    await writeFile(file, text);
  }
  if (s.settings.json) s.out(JSON.stringify({ wrote: outputs.map(([f]) => f), methods: model.methods.length, notifications: model.notifications.length }));
  else for (const [file] of outputs) s.out(`wrote ${file} (${summary})`);
  return ExitCode.ok;
}

/** rpc.discover through the session's caller (RabbitMQ, or the gateway with --via gateway / embedded). */
async function discover(s: Session, timeoutMs: number | undefined): Promise<unknown> {
  const client = await s.client();
  try {
    return await client.call('rpc.discover', undefined, timeoutMs === undefined ? {} : { timeoutMs });
  } catch (err) {
    if (wireErrorOf(err)?.code !== ErrorCode.MethodNotFound) throw err;
    throw new CliError('CLI_NO_DISCOVERY', 'nobody serves rpc.discover: start the broker (npm start), or pass --from FILE', ExitCode.unreachable, { cause: err });
  }
}

function parse(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`${source === '-' ? 'stdin' : source} is not JSON`);
  }
}

/**
 * The document as saved with --openrpc: what the clients are made from, without what differs
 * between two runs of the same system (servers, instance counts) and in a fixed order.
 */
export function savedDocument(doc: unknown): string {
  const { servers: _servers, ...rest } = doc as Record<string, unknown>;
  const services = Array.isArray(rest['x-warren-services']) ? (rest['x-warren-services'] as Record<string, unknown>[]) : undefined;
  const methods = Array.isArray(rest['methods']) ? (rest['methods'] as Record<string, unknown>[]) : [];
  const notes = Array.isArray(rest['x-warren-notifications']) ? (rest['x-warren-notifications'] as Record<string, unknown>[]) : undefined;
  const key = (e: Record<string, unknown>, field: string): string => (typeof e[field] === 'string' ? (e[field] as string) : '');
  return `${JSON.stringify(
    {
      ...rest,
      methods: [...methods].sort((a, b) => compare(key(a, 'name'), key(b, 'name'))),
      ...(services === undefined ? {} : { 'x-warren-services': services.map(({ instances: _instances, ...s }) => s).sort((a, b) => compare(key(a, 'name'), key(b, 'name'))) }),
      ...(notes === undefined ? {} : { 'x-warren-notifications': [...notes].sort((a, b) => compare(key(a, 'name'), key(b, 'name')) || compare(key(a, 'service'), key(b, 'service'))) }),
    },
    null,
    2,
  )}\n`;
}
