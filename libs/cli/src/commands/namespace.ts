// `warren namespace rm NAME`: removes what a namespace left behind after trying something: its
// queues and exchanges on RabbitMQ and its keys in Redis. Lists them first and asks for the
// namespace's name to be typed back (`--yes` skips that); refuses while any of its queues has a
// consumer (services still running) unless `--force`.
import { createInterface } from 'node:readline';
import { ServiceRegistry, names } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { envGiven } from '@warren/config';
import { PrefixKeys } from '@warren/inflight';
import { redactUrl } from '@warren/logger';
import { CliError, ExitCode, UnreachableError, UsageError, type ExitCodeValue } from '../errors';
import { derivedResources, managementResources, type Resources } from './namespace-resources';
import type { Session } from '../session';

export interface NamespaceRmFlags {
  /** Delete without asking. */
  readonly yes?: boolean;
  /** Delete even while queues have consumers. */
  readonly force?: boolean;
  /** The Redis key prefix of the namespace's services. @default the namespace */
  readonly redisPrefix?: string;
}

/** How many Redis keys are named one by one before the rest are counted. */
const keysShown = 10;

export async function namespaceRmCommand(s: Session, namespace: string, flags: NamespaceRmFlags): Promise<ExitCodeValue> {
  try {
    names(namespace);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  // The services' convention (WARREN_KEY_PREFIX unset): their keys are prefixed with the namespace.
  const prefix = flags.redisPrefix ?? namespace;
  const connection = new AmqpConnection({ urls: [...s.settings.amqpUrls], startTimeoutMs: s.settings.connectTimeoutMs, connectionName: 'warren-cli-namespace-rm', reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } });
  let keys: PrefixKeys;
  try {
    keys = new PrefixKeys(s.settings.redisUrl, prefix, Math.min(s.settings.connectTimeoutMs, 3000));
  } catch (err) {
    throw new UsageError(`--redis-prefix: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    await connection.start().catch((err: unknown) => Promise.reject(new UnreachableError(`RabbitMQ at ${s.settings.amqpUrls.map(redactUrl).join(', ')}`, err)));
    const redisKeys = await keys.list().catch((err: unknown) => Promise.reject(new UnreachableError(`Redis at ${redactUrl(s.settings.redisUrl)}`, err)));
    const management = envGiven(s.io.env, 'RABBITMQ_MANAGEMENT_URL');
    const found =
      management === undefined
        ? await derivedResources(connection, namespace, await keys.directoryServices(redisKeys), () => discoverServices(connection, namespace))
        : await managementResources(management, vhostOf(s.settings.amqpUrls[0]), namespace);
    show(s, namespace, prefix, found, redisKeys);
    const busy = found.queues.filter((q) => q.consumers > 0);
    if (busy.length > 0 && !flags.force) {
      throw new CliError('CLI_IN_USE', `namespace ${JSON.stringify(namespace)} is in use: ${busy.map((q) => `${q.name} has ${q.consumers} consumer(s)`).join(', ')}; stop its services, or pass --force`, ExitCode.error);
    }
    if (found.queues.length + found.exchanges.length + redisKeys.length === 0) {
      if (!s.settings.json) s.out(`nothing to remove in namespace ${namespace}`);
      return ExitCode.ok;
    }
    if (!flags.yes && !(await confirmed(s, namespace))) throw new CliError('CLI_NOT_CONFIRMED', 'not confirmed: nothing was removed', ExitCode.error);
    await remove(connection, found);
    const deletedKeys = await keys.delete(redisKeys);
    if (s.settings.json) s.out(JSON.stringify({ namespace, keyPrefix: prefix, removed: true, queues: found.queues.map((q) => q.name), exchanges: found.exchanges, redisKeys: deletedKeys }));
    else s.out(`${s.c.green('removed')} ${found.queues.length} queues, ${found.exchanges.length} exchanges and ${deletedKeys} Redis keys of namespace ${namespace}`);
    return ExitCode.ok;
  } finally {
    await keys.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
  }
}

/** What will go, before anything does (with --json: one line, then the outcome). */
function show(s: Session, namespace: string, prefix: string, found: Resources, redisKeys: readonly string[]): void {
  if (s.settings.json) {
    s.out(JSON.stringify({ namespace, keyPrefix: prefix, source: found.source, queues: found.queues, exchanges: found.exchanges, redisKeys }));
    return;
  }
  s.err(`namespace ${namespace} (found via ${found.source === 'management' ? 'the management API' : 'names and announcements'}):`);
  s.err(`  queues (${found.queues.length}):${found.queues.map((q) => `\n    ${q.name}${q.messages > 0 ? ` (${q.messages} messages)` : ''}${q.consumers > 0 ? s.c.red(` (${q.consumers} consumers)`) : ''}`).join('')}`);
  s.err(`  exchanges (${found.exchanges.length}):${found.exchanges.map((e) => `\n    ${e}`).join('')}`);
  const more = redisKeys.length > keysShown ? `\n    … and ${redisKeys.length - keysShown} more` : '';
  s.err(`  Redis keys under ${prefix}: (${redisKeys.length}):${redisKeys.slice(0, keysShown).map((k) => `\n    ${k}`).join('')}${more}`);
}

/** Asks for the namespace's name on stdin (one line); anything else is a no. */
async function confirmed(s: Session, namespace: string): Promise<boolean> {
  s.err(`Type the namespace's name (${namespace}) to remove all of the above, anything else to keep it:`);
  const lines = createInterface({ input: s.io.stdin, terminal: false });
  try {
    for await (const line of lines) return line.trim() === namespace;
    return false;
  } finally {
    lines.close();
  }
}

/** Queues first (nothing is bound to them after), then exchanges; each on a channel of its own, as a refusal closes it. */
async function remove(connection: AmqpConnection, found: Resources): Promise<void> {
  const model = connection.model;
  if (!model) throw new UnreachableError('RabbitMQ', new Error('connection lost'));
  type Channel = Awaited<ReturnType<NonNullable<AmqpConnection['model']>['createChannel']>>;
  const once = async (work: (ch: Channel) => Promise<unknown>): Promise<void> => {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    try {
      await work(ch);
    } finally {
      await ch.close().catch(() => undefined);
    }
  };
  for (const q of found.queues) await once((ch) => ch.deleteQueue(q.name));
  for (const e of found.exchanges) await once((ch) => ch.deleteExchange(e));
}

/** The services that announce themselves in `namespace` (an announce-now round), when its control exchange exists. */
async function discoverServices(connection: AmqpConnection, namespace: string): Promise<string[]> {
  const registry = await ServiceRegistry.start(connection, { namespace });
  try {
    await registry.discovered();
    return [...new Set(registry.list().map((i) => i.service))];
  } finally {
    await registry.close();
  }
}

/** The vhost of an AMQP URL (its path), `/` when it names none. */
function vhostOf(url: string | undefined): string {
  const path = url === undefined || !URL.canParse(url) ? '' : new URL(url).pathname.slice(1);
  return path === '' ? '/' : decodeURIComponent(path);
}
