/**
 * The "add" service of the guarded targets (child process): plain amqplib doing on the wire what a
 * Warren service does, with no code of Warren's, so the bench can say what Warren's guarantees cost
 * apart from what its JavaScript costs.
 *
 *   node bench/dist/amqp-guarded-server.js <exchange> <queue> [redis|redis1 <keyPrefix>]
 *
 * It consumes its queue bound to a direct exchange under the routing key `add` and answers on the
 * caller's `replyTo` (a named reply queue or direct reply-to: the same publish either way). With
 * `redis`, it also keeps the least a Redis call record can be (the floor of tracking, not a tracker):
 * the deliveries of one tick are claimed by one script doing `SET <key> <record> NX PX` for each,
 * written before their handlers run, and once a reply is published its outcome is stored by
 * `SET <key> <record> PX` (one script per tick) and the request is acked when Redis has answered, so a
 * redelivery would find the outcome. No check of what the claim found, no lease, cancel mark or
 * suspect: whatever a real tracker does costs at least this. `redis1` is the floor of the speed
 * issue's one write per quick call (#29): a claim only for a call still running when its tick's batch
 * goes out, which the instant `add` never is, so each call writes its outcome alone.
 *
 * Same stdout protocol as amqp-baseline-server.ts: `ready`, and `cpu <us>` per `cpu` line on stdin.
 */
import { connect, type ConsumeMessage } from 'amqplib';
import { Redis } from 'ioredis';
import { amqpUrl } from '@warren/testkit';
import { respond } from './add-answer';
import { serveChild } from './serve-child';

/** The bench's `--prefetch` (rpc-bench.ts), the same for every target's service. */
const PREFETCH = Number(process.env['BENCH_PREFETCH'] ?? 64);
/** About the size of a Warren running record (state, times, lease, owner, token, attempt, method): the field separator is U+001F. */
const runningRecord = (now: number): string => `R\x1f${now}\x1f${now + 30_000}\x1fbench-guarded.0f3a9c\x1f7d1e22aa\x1f1\x1f\x1fadd\x1f\x1f\x1f`;
const doneRecord = (now: number, result: string): string => `D\x1f${now}\x1f${now}\x1fbench-guarded.0f3a9c\x1f7d1e22aa\x1f1\x1f\x1fadd\x1f\x1f${now}\x1f${result}`;
const recordTtlMs = '60000';

/**
 * The two scripts of the `redis` mode, one call each per tick for all that tick's calls: a batch per
 * script is what Warren's tracker does too, and cheaper for Redis and the worker than a pipeline of one
 * command per call (measured at c=64, medians of 7 rounds: 11,282 calls/s with a `SET` per call, 13,012
 * for Warren's tracker; docs/benchmarks.md). Nothing but the writes: no reads, no time from Redis, no
 * replies per call.
 */
const claimAll = `for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2], 'NX') end return 0`;
const storeAll = `local ttl = ARGV[#KEYS + 1] for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[i], 'PX', ttl) end return 0`;

interface FloorCommands {
  claimAll(numKeys: number, ...keysThenArgs: string[]): Promise<number>;
  storeAll(numKeys: number, ...keysThenArgs: string[]): Promise<number>;
}

/**
 * A write the floor could not make ends the process: its requests would otherwise stay unacked for good,
 * and a floor measured without its writes would be no floor. The bench sees the service exit.
 */
function fail(what: string, err: unknown): never {
  console.error(`[guarded-server] ${what}:`, err instanceof Error ? err.message : err);
  process.exit(1);
}

/** Which records a call writes: a claim before its handler and its outcome (`redis`), or its outcome alone (`redis1`). */
type Records = 'claim-and-outcome' | 'outcome';
const recordsOf = (mode: string | undefined): Records | undefined =>
  mode === 'redis' ? 'claim-and-outcome' : mode === 'redis1' ? 'outcome' : undefined;

/** The Redis side of the `redis` modes: a claim script (unless `outcome` alone) and an outcome script per tick. */
class RecordFloor {
  private claims: Array<{ key: string; run: () => void }> = [];
  private outcomes: Array<{ key: string; value: string; ack: () => void }> = [];
  private readonly commands: FloorCommands;

  constructor(private readonly redis: Redis, private readonly keyPrefix: string, private readonly records: Records) {
    redis.defineCommand('claimAll', { lua: claimAll });
    redis.defineCommand('storeAll', { lua: storeAll });
    this.commands = redis as unknown as FloorCommands;
  }

  key(callId: string): string {
    return `${this.keyPrefix}:c:${callId}`;
  }

  /**
   * Queues a claim and runs `run` once the tick's claims are written (not answered: first deliveries do not wait).
   * Writing outcomes alone, it runs `run` at once: a quick call's handler has answered before the claims would go out.
   */
  claim(callId: string, run: () => void): void {
    if (this.records === 'outcome') return run();
    if (this.claims.length === 0) process.nextTick(() => this.writeClaims());
    this.claims.push({ key: this.key(callId), run });
  }

  /** Stores an outcome; `ack` runs once Redis has it. */
  finish(callId: string, value: string, ack: () => void): void {
    if (this.outcomes.length === 0) setImmediate(() => this.writeOutcomes());
    this.outcomes.push({ key: this.key(callId), value, ack });
  }

  /** Deletes the records this run left (they would expire anyway). */
  async clear(): Promise<void> {
    for await (const keys of this.redis.scanStream({ match: `${this.keyPrefix}:c:*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) await this.redis.del(...keys);
    }
  }

  private writeClaims(): void {
    const batch = this.claims;
    this.claims = [];
    const keys = batch.map((c) => c.key);
    // The command is written to the socket before it returns: the handlers start after the write.
    this.commands.claimAll(keys.length, ...keys, runningRecord(Date.now()), recordTtlMs).catch((err: unknown) => fail('claim failed', err));
    for (const { run } of batch) run();
  }

  private writeOutcomes(): void {
    const batch = this.outcomes;
    this.outcomes = [];
    this.commands.storeAll(batch.length, ...batch.map((o) => o.key), ...batch.map((o) => o.value), recordTtlMs).then(
      () => {
        for (const { ack } of batch) ack();
      },
      (err: unknown) => fail('outcome not stored', err),
    );
  }
}

async function main(): Promise<void> {
  const [exchange, queue, mode, keyPrefix] = process.argv.slice(2);
  const records = recordsOf(mode);
  if (!exchange || !queue || (mode !== undefined && (!records || !keyPrefix))) throw new Error('usage: amqp-guarded-server.js <exchange> <queue> [redis|redis1 <keyPrefix>]');
  const redis = records ? new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', { enableAutoPipelining: false }) : undefined;
  const floor = redis && records && keyPrefix ? new RecordFloor(redis, keyPrefix, records) : undefined;

  const conn = await connect(amqpUrl(), { noDelay: true });
  conn.on('error', (err: Error) => console.error('[guarded-server] connection error:', err.message));
  const ch = await conn.createChannel();
  ch.on('error', (err: Error) => console.error('[guarded-server] channel error:', err.message));
  await ch.assertExchange(exchange, 'direct', { durable: false, autoDelete: false });
  await ch.assertQueue(queue, { durable: true, autoDelete: false, arguments: { 'x-expires': 60_000 } });
  await ch.bindQueue(queue, exchange, 'add');
  await ch.prefetch(PREFETCH);

  const reply = (msg: ConsumeMessage): string | undefined => {
    const replyTo: unknown = msg.properties.replyTo;
    const correlationId: unknown = msg.properties.correlationId;
    if (typeof replyTo !== 'string' || replyTo === '' || typeof correlationId !== 'string') return undefined;
    const text = JSON.stringify(respond(msg.content));
    ch.publish('', replyTo, Buffer.from(text), { correlationId, contentType: 'application/json' });
    return text;
  };
  // An outcome stored after the channel closed (shutdown) has nothing left to ack: RabbitMQ requeued it.
  const ack = (msg: ConsumeMessage): void => {
    try {
      ch.ack(msg);
    } catch {
      // the channel is closed
    }
  };
  const onMessage = (msg: ConsumeMessage | null): void => {
    if (msg === null) return; // consumer cancelled by the broker
    if (!floor) {
      reply(msg);
      ch.ack(msg);
      return;
    }
    const callId = String(msg.properties.correlationId);
    floor.claim(callId, () => {
      const text = reply(msg);
      if (text === undefined) ack(msg);
      else floor.finish(callId, doneRecord(Date.now(), text), () => ack(msg));
    });
  };
  const { consumerTag } = await ch.consume(queue, onMessage, { noAck: false });
  serveChild('guarded-server', async () => {
    await ch.cancel(consumerTag);
    await ch.deleteQueue(queue);
    await ch.deleteExchange(exchange);
    await ch.close();
    await conn.close();
    await floor?.clear();
    await redis?.quit();
  });
}

main().catch((err: unknown) => {
  console.error('[guarded-server] fatal:', err instanceof Error ? err.message : err);
  process.exit(1);
});
