/**
 * The guarded targets: plain amqplib doing on the wire what Warren does (callers.ts `amqp-guarded`,
 * amqp-guarded-server.ts), with `records` also keeping the least a Redis call record can be. They
 * measure what Warren's guarantees cost apart from Warren's own code: the ceiling an untracked Warren
 * call can reach on this machine, and the floor of a tracked one. `reply: 'direct'` and
 * `records: 'outcome'` are the floors of the speed issue's two designs (#29): replies by direct
 * reply-to once the outcome is in Redis, and one record per quick call.
 */
import type { BenchTarget } from './harness';
import { sessionOf, spawnServer, uniqueName } from './amqp-baseline';

export interface GuardedOptions {
  /** Where the caller takes its replies: a named queue, acked, or direct reply-to, noAck. */
  readonly reply: 'named' | 'direct';
  /** What the service writes to Redis per call: nothing, a claim and the outcome, or the outcome alone. */
  readonly records: 'none' | 'claim-and-outcome' | 'outcome';
}

/** The server's mode argument and the target name's suffix for each `records`. */
const recordModes = { none: undefined, 'claim-and-outcome': 'redis', outcome: 'redis1' } as const;

export function amqpGuarded(opts: GuardedOptions): BenchTarget {
  const mode = recordModes[opts.records];
  return {
    name: `amqp-guarded${opts.reply === 'direct' ? '-direct' : ''}${mode === undefined ? '' : `+${mode}`}`,
    async start() {
      const run = uniqueName('bench.guarded');
      const exchange = `${run}.requests`;
      // Stopped by the session after the caller: it deletes the exchange, its queue and its records.
      const server = await spawnServer('amqp-guarded-server', [exchange, `${run}.svc`, ...(mode === undefined ? [] : [mode, run])]);
      // The caller deletes its named reply queue; direct reply-to declares nothing.
      const replyQueue = opts.reply === 'named' ? `${run}.reply` : undefined;
      return sessionOf(server, { kind: 'amqp-guarded', reply: opts.reply, exchange, replyQueue, timeoutMs: 10_000 });
    },
  };
}
