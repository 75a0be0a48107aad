// What `warren namespace rm` finds of a namespace on RabbitMQ: every queue and exchange whose name
// begins with `NAME.` through the management API (RABBITMQ_MANAGEMENT_URL), else the names
// @warren/amqp's names.ts derives (the fixed exchanges, the delay chain, and the queues of each
// service its announcements name), each checked with a passive declare.
import { names } from '@warren/amqp';
import type { AmqpConnection } from '@warren/amqp-transport';

export interface FoundQueue {
  readonly name: string;
  readonly messages: number;
  readonly consumers: number;
}

export interface Resources {
  readonly source: 'management' | 'derived';
  readonly queues: readonly FoundQueue[];
  readonly exchanges: readonly string[];
}

/** The levels of the delay chain (wire/delay.ts). */
const delayLevels = 32;

/**
 * The namespace's queues and exchanges as names.ts derives them, those that exist. Services are `known`
 * (the method directory's, in Redis) and those `announced()` names (an announce-now round), asked only
 * when the namespace's control exchange exists, so looking creates nothing. Per-instance and reply
 * queues are exclusive or expire, so they go by themselves; a service's retry queues (`.retry.<ms>`),
 * and the queues of a service that neither runs nor wrote the directory, only the management API finds.
 */
export async function derivedResources(connection: AmqpConnection, namespace: string, known: readonly string[], announced: () => Promise<readonly string[]>): Promise<Resources> {
  const n = names(namespace);
  const levels = Array.from({ length: delayLevels }, (_, level) => level);
  const fixed = [n.requestExchange, n.eventExchange, n.deadLetterExchange, n.controlExchange, n.discoverExchange, n.cancelExchange, n.delayDueExchange, ...levels.map((l) => n.delayExchange(l))];
  const exchanges = (await Promise.all(fixed.map(async (e) => ((await exchangeExists(connection, e)) ? [e] : [])))).flat();
  const served = [...new Set([...known, ...(exchanges.includes(n.controlExchange) ? await announced() : [])])];
  const queueNames = [...levels.map((l) => n.delayQueue(l)), ...served.flatMap((svc) => [n.serviceQueue(svc), n.deadLetterQueue(svc), n.serviceEventQueue(svc)])];
  const queues = (await Promise.all(queueNames.map((q) => queueInfo(connection, q)))).flatMap((q) => (q ? [q] : []));
  return { source: 'derived', queues, exchanges };
}

/** A passive declare on a channel of its own: a missing exchange closes it (404), which is the answer. */
async function exchangeExists(connection: AmqpConnection, exchange: string): Promise<boolean> {
  const ch = await requireModel(connection).createChannel();
  ch.on('error', () => undefined);
  try {
    await ch.checkExchange(exchange);
    return true;
  } catch {
    return false;
  } finally {
    await ch.close().catch(() => undefined);
  }
}

async function queueInfo(connection: AmqpConnection, queue: string): Promise<FoundQueue | undefined> {
  const ch = await requireModel(connection).createChannel();
  ch.on('error', () => undefined);
  try {
    const ok = await ch.checkQueue(queue);
    return { name: queue, messages: ok.messageCount, consumers: ok.consumerCount };
  } catch {
    return undefined;
  } finally {
    await ch.close().catch(() => undefined);
  }
}

function requireModel(connection: AmqpConnection): NonNullable<AmqpConnection['model']> {
  const model = connection.model;
  if (!model) throw new Error('RabbitMQ connection lost');
  return model;
}

/** Every queue and exchange of the vhost whose name begins with `NAME.`, from the management API. */
export async function managementResources(managementUrl: string, vhost: string, namespace: string): Promise<Resources> {
  const base = new URL(managementUrl);
  const auth = base.username === '' ? undefined : `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
  base.username = '';
  base.password = '';
  const root = base.href.endsWith('/') ? base.href : `${base.href}/`;
  const list = async <T>(kind: 'queues' | 'exchanges', columns: string): Promise<T[]> => {
    const url = new URL(`api/${kind}/${encodeURIComponent(vhost)}?columns=${columns}`, root);
    const response = await fetch(url, { headers: auth === undefined ? {} : { authorization: auth }, signal: AbortSignal.timeout(5000) });
    if (!response.ok) throw new Error(`the management API answered ${response.status} for ${kind}`);
    return (await response.json()) as T[];
  };
  const mine = (name: string): boolean => name.startsWith(`${namespace}.`);
  const [queues, exchanges] = await Promise.all([list<{ name: string; messages?: number; consumers?: number }>('queues', 'name,messages,consumers'), list<{ name: string }>('exchanges', 'name')]);
  return {
    source: 'management',
    queues: queues.filter((q) => mine(q.name)).map((q) => ({ name: q.name, messages: q.messages ?? 0, consumers: q.consumers ?? 0 })).sort((a, b) => (a.name < b.name ? -1 : 1)),
    exchanges: exchanges.map((e) => e.name).filter(mine).sort(),
  };
}
