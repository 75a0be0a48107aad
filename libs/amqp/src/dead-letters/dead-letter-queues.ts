import { randomBytes } from 'node:crypto';
import { closeChannel, type WireChannel, type WireModel, type WireGetMessage, type WireConnection } from '@warren/amqp-transport';
import { ServiceUnavailableError, decode } from '@warren/jsonrpc';
import { DeadHeader } from '../wire/dead-letter';
import { Header, numberHeader, stringHeader } from '../wire/headers';
import { names, type Names } from '../wire/names';
import { carriedHeaders } from '../wire/republish';
import { amqpJson, amqpTimeSeconds } from './amqp-json';

/** One message in a service's dead-letter queue, as `dlq.list` shows it. */
export interface DeadLetter {
  /** Names it for `show` and `replay` (Warren's dead-letter id, else its call id). */
  readonly id: string;
  readonly service: string;
  /** The method of the request, `''` when its body is unreadable. */
  readonly method: string;
  readonly callId: string;
  /** Why: Warren's reason header (`worker_lost`, `retries_exhausted`, ...), else RabbitMQ's (`expired`, `rejected`, `maxlen`). */
  readonly reason: string;
  /** The error code its caller was answered with, when Warren dead-lettered it. */
  readonly code?: number;
  readonly attempts: number;
  /** When it was dead-lettered, ms since the epoch. */
  readonly deadLetteredAt: number;
  /** Size of its params as JSON. */
  readonly paramsBytes: number;
}

/** A dead letter with its request body and its AMQP properties and headers as stored (`dlq.show`). */
export type DeadLetterDetail = DeadLetter & {
  readonly request: unknown;
  readonly amqp: {
    /** The message's AMQP properties that are set (`correlationId`, `deliveryMode`, `timestamp`, ...). */
    readonly properties: Readonly<Record<string, string | number>>;
    /** Its headers as JSON: dates as ISO strings, binary as UTF-8 text, tables as objects. */
    readonly headers: Readonly<Record<string, unknown>>;
    /** Where RabbitMQ delivered it from: the exchange and routing key it was dead-lettered with. */
    readonly exchange: string;
    readonly routingKey: string;
  };
};

export interface DeadLetterOptions {
  /** @default 'warren' */
  readonly namespace?: string;
  /** Most messages one browse reads; a queue holding more shows its newest among these. @default 10000 */
  readonly maxBrowse?: number;
}

/**
 * A service's dead-letter queue, browsed and acted on over AMQP (no management plugin). A browse
 * takes the messages unacked, one `basic.get` at a time, and gives them back by closing its channel,
 * so nothing is lost if the process dies meanwhile; browses of one instance take turns, since a
 * second browse would not see what the first holds. Order is by dead-letter time, newest first.
 */
export class DeadLetterQueues {
  private readonly n: Names;
  private readonly maxBrowse: number;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly connection: WireConnection, options: DeadLetterOptions = {}) {
    this.n = names(options.namespace ?? 'warren');
    this.maxBrowse = options.maxBrowse ?? 10_000;
  }

  /** Messages in `service`'s dead-letter queue; 0 when the queue does not exist. */
  async count(service: string): Promise<number> {
    return this.withChannel(async (ch) => (await ch.checkQueue(this.n.deadLetterQueue(service))).messageCount).catch(() => 0);
  }

  /** Every dead letter of `services`, newest first. */
  async list(services: readonly string[]): Promise<DeadLetter[]> {
    const all: DeadLetter[] = [];
    for (const service of services) all.push(...(await this.browse(service, (letters) => letters.map((l) => l.summary))));
    return all.sort((a, b) => b.deadLetteredAt - a.deadLetteredAt);
  }

  /** One dead letter with its request; undefined when there is none by that id. */
  async show(service: string, id: string): Promise<DeadLetterDetail | undefined> {
    return this.browse(service, (letters) => {
      const found = letters.find((l) => l.summary.id === id);
      return found ? { ...found.summary, request: found.request, amqp: amqpOf(found.message) } : undefined;
    });
  }

  /**
   * Sends dead letters back to the service queue as new calls (a new call id and deadline, no reply
   * queue: nobody waits for them; their outcome is in the in-flight store by the new call id) and
   * removes them from the dead-letter queue once RabbitMQ confirmed the copy. `id` picks one, `ids`
   * several; without either, all. `replays` pairs each dead letter's id with its new call id.
   */
  async replay(service: string, opts: { readonly id?: string; readonly ids?: readonly string[]; readonly timeoutMs: number }): Promise<{ replayed: number; callIds: string[]; replays: { id: string; callId: string }[] }> {
    const wanted = opts.ids !== undefined ? new Set(opts.ids) : opts.id !== undefined ? new Set([opts.id]) : undefined;
    const model = this.model();
    const out = await model.createConfirmChannel();
    out.on('error', () => undefined);
    try {
      return await this.browse(service, async (letters, ch) => {
        const chosen = letters.filter((l) => wanted === undefined || wanted.has(l.summary.id));
        const callIds: string[] = [];
        const replays: { id: string; callId: string }[] = [];
        for (const letter of chosen) {
          const callId = `replay.${randomBytes(6).toString('hex')}`;
          const deadline = Date.now() + opts.timeoutMs;
          const { [Header.deadline]: _d, ...headers } = replayHeaders(letter.message);
          out.publish('', this.n.serviceQueue(service), letter.message.content, {
            contentType: 'application/json',
            correlationId: callId,
            expiration: String(opts.timeoutMs),
            persistent: letter.message.properties.deliveryMode === 2,
            headers: { ...headers, [Header.deadline]: deadline },
          });
          callIds.push(callId);
          replays.push({ id: letter.summary.id, callId });
        }
        await out.waitForConfirms();
        for (const letter of chosen) ch.ack(letter.message);
        return { replayed: chosen.length, callIds, replays };
      });
    } finally {
      await closeChannel(out);
    }
  }

  /** Empties `service`'s dead-letter queue; how many messages went. */
  async purge(service: string): Promise<number> {
    return this.inTurn(() => this.withChannel(async (ch) => (await ch.purgeQueue(this.n.deadLetterQueue(service))).messageCount));
  }

  /** Reads the queue (unacked), runs `use` on what it found, then gives back whatever `use` did not ack. */
  private browse<T>(service: string, use: (letters: Browsed[], ch: WireChannel) => T | Promise<T>): Promise<T> {
    return this.inTurn(() => this.withChannel(async (ch) => {
      const queue = this.n.deadLetterQueue(service);
      const letters: Browsed[] = [];
      try {
        await ch.checkQueue(queue);
      } catch {
        return use([], ch);
      }
      while (letters.length < this.maxBrowse) {
        const message = await ch.get(queue, { noAck: false });
        if (message === false) break;
        letters.push(read(service, message, letters.length));
      }
      return use(letters, ch);
    }));
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** A channel of its own, closed afterwards (which gives back every message taken and not acked). */
  private async withChannel<T>(work: (ch: WireChannel) => Promise<T>): Promise<T> {
    const ch = await this.model().createChannel();
    // A missing queue closes the channel with 404; the caller sees the rejected operation instead.
    ch.on('error', () => undefined);
    try {
      return await work(ch);
    } finally {
      await closeChannel(ch);
    }
  }

  private model(): WireModel {
    const model = this.connection.model;
    if (!model) throw new ServiceUnavailableError(undefined, { reason: 'not_connected' });
    return model;
  }
}

interface Browsed {
  readonly summary: DeadLetter;
  readonly request: unknown;
  readonly message: WireGetMessage;
}

/** Warren's bookkeeping a replay starts afresh: the reason headers, the attempt (a replay is attempt 1). */
const replayDropped: ReadonlySet<string> = new Set<string>([...Object.values(DeadHeader), Header.attempt]);

/** The headers a replayed copy keeps: the caller's (trace, protocol), none of the dead letter's bookkeeping. */
function replayHeaders(message: WireGetMessage): Record<string, unknown> {
  return carriedHeaders(message.properties.headers, replayDropped);
}

function read(service: string, message: WireGetMessage, index: number): Browsed {
  const headers = message.properties.headers as Record<string, unknown> | undefined;
  const death = firstDeath(headers);
  const decoded = decode(message.content);
  const request = decoded.kind === 'single' && (decoded.item.kind === 'request' || decoded.item.kind === 'notification') ? decoded.item.message : undefined;
  const callId = typeof message.properties.correlationId === 'string' ? message.properties.correlationId : '';
  const code = numberHeader(headers, DeadHeader.code);
  const summary: DeadLetter = {
    id: stringHeader(headers, DeadHeader.id) ?? (callId !== '' ? callId : `dl-${index}`),
    service,
    method: request?.method ?? '',
    callId,
    reason: stringHeader(headers, DeadHeader.reason) ?? death.reason ?? 'unknown',
    ...(code === undefined ? {} : { code }),
    attempts: numberHeader(headers, DeadHeader.attempts) ?? attemptsOf(death),
    deadLetteredAt: numberHeader(headers, DeadHeader.at) ?? death.at ?? 0,
    paramsBytes: request?.params === undefined ? 0 : Buffer.byteLength(JSON.stringify(request.params)),
  };
  return { summary, request: request ?? safeText(message.content), message };
}

/**
 * Attempts of a message RabbitMQ dead-lettered itself (no Warren header): one that expired or
 * overflowed in the queue never reached a worker (0; x-death's count says how often it was
 * dead-lettered, not run); a rejected one ran as often as it was rejected.
 */
function attemptsOf(death: { reason?: string; count?: number }): number {
  if (death.reason === 'expired' || death.reason === 'maxlen') return 0;
  return death.count ?? 1;
}

/** RabbitMQ's own record of the latest dead-lettering (`x-death`, newest first), for messages it dead-lettered itself. */
function firstDeath(headers: Record<string, unknown> | undefined): { reason?: string; count?: number; at?: number } {
  const deaths = headers?.[Header.death];
  const first: unknown = Array.isArray(deaths) ? deaths[0] : undefined;
  if (typeof first !== 'object' || first === null) return {};
  const entry = first as Record<string, unknown>;
  const reason = stringHeader(entry, 'reason');
  const count = numberHeader(entry, 'count');
  const seconds = amqpTimeSeconds(entry['time']);
  return { ...(reason === undefined ? {} : { reason }), ...(count === undefined ? {} : { count }), ...(seconds === undefined ? {} : { at: Math.round(seconds * 1000) }) };
}

/** The AMQP side of a dead letter for `dlq.show`: the properties that are set, and the headers as JSON. */
function amqpOf(message: WireGetMessage): DeadLetterDetail['amqp'] {
  const properties: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(message.properties)) {
    if (key !== 'headers' && (typeof value === 'string' || typeof value === 'number')) properties[key] = value;
  }
  const headers = amqpJson(message.properties.headers ?? {});
  return { properties, headers: typeof headers === 'object' && headers !== null && !Array.isArray(headers) ? headers as Record<string, unknown> : {}, exchange: message.fields.exchange, routingKey: message.fields.routingKey };
}

/** A body that is not a JSON-RPC message, shown as text (cut) rather than dropped. */
function safeText(body: Buffer): string {
  return body.subarray(0, 4096).toString('utf8');
}
