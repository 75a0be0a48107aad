import { names, type Names, type QueueDepth } from '@warren/amqp';

/**
 * One service's queues as GET /services and the console show them (docs/gateway.md, "Queue
 * figures"). `messages` and `consumers` always; the rest only from the RabbitMQ management API.
 */
export interface ServiceQueueStats extends QueueDepth {
  /** Where the figures came from: the management HTTP API, or passive declares over AMQP (ready and consumers only). */
  readonly source: 'management' | 'amqp';
  /** Delivered to a consumer, not yet acked: the calls being worked on. */
  readonly unacked?: number;
  /** Messages per second over RabbitMQ's last sample: published to the queue, delivered from it, acked. */
  readonly rates?: { readonly publish: number; readonly deliver: number; readonly ack: number };
  /** Messages in the service's dead-letter queue (both sources). */
  readonly deadLetters?: number;
  /** Each delay queue (retries waiting their backoff) with its depth. */
  readonly retry?: readonly { readonly delayMs: number; readonly messages: number }[];
}

/** Reads every named service's queue figures at once. */
export interface QueueStatsReader {
  /** Which source it reads first (`management` falls back to `amqp` when the API does not answer). */
  readonly source: 'management' | 'amqp';
  read(services: readonly string[]): Promise<QueueStatsRead>;
}

/** One read: the figures by service (missing: no queue, or nothing answered) and why the preferred source was not used. */
export interface QueueStatsRead {
  readonly byService: ReadonlyMap<string, ServiceQueueStats>;
  readonly source: 'management' | 'amqp';
  /** The management API failed and the figures come from AMQP instead (the error, short). */
  readonly fallbackReason?: string;
}

/** Where to find the management API. */
export interface ManagementApi {
  /** Its base URL, credentials in it: `http://guest:guest@127.0.0.1:15672`. */
  readonly url: string;
  /** The virtual host of Warren's queues. @default '/' */
  readonly vhost?: string;
  /** A request slower than this fails (and the read falls back to AMQP). @default 2000 */
  readonly timeoutMs?: number;
}

/** What the AMQP fallback reads with (the gateway's cached passive declares). */
export interface PassiveDepths {
  read(service: string): Promise<QueueDepth | undefined>;
  readDeadLetters(service: string): Promise<QueueDepth | undefined>;
}

/** Passive declares: ready messages and consumers of the request queue, and the dead-letter queue's depth. */
export function amqpQueueStats(depths: PassiveDepths): QueueStatsReader {
  return {
    source: 'amqp',
    read: async (services) => ({ byService: await passive(depths, services), source: 'amqp' }),
  };
}

async function passive(depths: PassiveDepths, services: readonly string[]): Promise<Map<string, ServiceQueueStats>> {
  const out = new Map<string, ServiceQueueStats>();
  await Promise.all(services.map(async (service) => {
    const [requests, dead] = await Promise.all([depths.read(service), depths.readDeadLetters(service)]);
    if (requests) out.set(service, { source: 'amqp', messages: requests.messages, consumers: requests.consumers, ...(dead ? { deadLetters: dead.messages } : {}) });
  }));
  return out;
}

/** One queue as GET /api/queues/<vhost> lists it (the columns asked for). */
interface ApiQueue {
  readonly name: string;
  readonly messages_ready?: number;
  readonly messages_unacknowledged?: number;
  readonly consumers?: number;
  readonly message_stats?: {
    readonly publish_details?: { readonly rate?: number };
    readonly deliver_get_details?: { readonly rate?: number };
    readonly ack_details?: { readonly rate?: number };
  };
}

/**
 * The management API first: one GET lists every queue of the namespace (`NS.svc.*`) with ready,
 * unacked, consumers and rates; cached `maxAgeMs` and shared by concurrent reads. When it fails
 * (plugin off, wrong credentials, timeout) the read falls back to `fallback` and says why.
 */
export function managementQueueStats(api: ManagementApi, namespace: string | undefined, fallback: PassiveDepths, maxAgeMs = 1000): QueueStatsReader {
  const n = names(namespace);
  const base = new URL(api.url);
  const auth = base.username === '' ? undefined : `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
  base.username = '';
  base.password = '';
  const query = new URLSearchParams({
    page: '1',
    page_size: '500',
    name: `^${escapeRegex(n.namespace)}\\.svc\\.`,
    use_regex: 'true',
    columns: 'name,messages_ready,messages_unacknowledged,consumers,message_stats',
  });
  const listUrl = new URL(`api/queues/${encodeURIComponent(api.vhost ?? '/')}?${query.toString()}`, base.href.endsWith('/') ? base.href : `${base.href}/`);
  let cached: { readonly at: number; readonly queues: Promise<readonly ApiQueue[]> } | undefined;
  const list = (): Promise<readonly ApiQueue[]> => {
    if (cached === undefined || Date.now() - cached.at > maxAgeMs) {
      const queues = fetchQueues(listUrl, auth, api.timeoutMs ?? 2000);
      cached = { at: Date.now(), queues };
      // A failure is not kept: the next read asks again.
      queues.catch(() => {
        if (cached?.queues === queues) cached = undefined;
      });
    }
    return cached.queues;
  };
  return {
    source: 'management',
    async read(services) {
      try {
        return { byService: fromApi(await list(), services, n), source: 'management' };
      } catch (err) {
        return { byService: await passive(fallback, services), source: 'amqp', fallbackReason: err instanceof Error ? err.message : String(err) };
      }
    },
  };
}

async function fetchQueues(url: URL, auth: string | undefined, timeoutMs: number): Promise<readonly ApiQueue[]> {
  const response = await fetch(url, { headers: { accept: 'application/json', ...(auth === undefined ? {} : { authorization: auth }) }, signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`management API answered HTTP ${response.status}`);
  const body = (await response.json()) as { items?: unknown };
  if (!Array.isArray(body.items)) throw new Error('management API answered without items');
  return body.items as ApiQueue[];
}

/** The figures of each service from the listed queues: its request queue, dead-letter queue and delay queues. */
function fromApi(queues: readonly ApiQueue[], services: readonly string[], n: Names): Map<string, ServiceQueueStats> {
  const byName = new Map(queues.map((q) => [q.name, q]));
  const out = new Map<string, ServiceQueueStats>();
  for (const service of services) {
    const q = byName.get(n.serviceQueue(service));
    if (!q) continue;
    const retryPrefix = `${n.serviceQueue(service)}.retry.`;
    const retry = queues
      .filter((r) => r.name.startsWith(retryPrefix) && /^\d+$/.test(r.name.slice(retryPrefix.length)))
      .map((r) => ({ delayMs: Number(r.name.slice(retryPrefix.length)), messages: (r.messages_ready ?? 0) + (r.messages_unacknowledged ?? 0) }))
      .sort((a, b) => a.delayMs - b.delayMs);
    const dead = byName.get(n.deadLetterQueue(service));
    const s = q.message_stats;
    out.set(service, {
      source: 'management',
      messages: q.messages_ready ?? 0,
      consumers: q.consumers ?? 0,
      unacked: q.messages_unacknowledged ?? 0,
      rates: { publish: rate(s?.publish_details?.rate), deliver: rate(s?.deliver_get_details?.rate), ack: rate(s?.ack_details?.rate) },
      ...(dead ? { deadLetters: (dead.messages_ready ?? 0) + (dead.messages_unacknowledged ?? 0) } : {}),
      retry,
    });
  }
  return out;
}

function rate(r: number | undefined): number {
  return r === undefined || !Number.isFinite(r) ? 0 : Math.round(r * 100) / 100;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
