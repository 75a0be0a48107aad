// How close to its due time a delayed call starts, over the real RabbitMQ's delay chain (issue 33's
// acceptance): 200 calls with due times spread from 1 s to 60 s, sent at once in shuffled order;
// each must start no earlier than its due time and within 1 s after it. It takes a minute, so it runs
// in the late soak stage (`npm run test:soak`), not in `npm test`.
import { connectClient, startService } from '@warren/amqp';
import { Teardown, amqpUrl } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';

const td = new Teardown();
const ns = new TestNamespace().withDelayChain();
afterAll(() => td.run());

const calls = 200;
const toleranceMs = 1000;

it(`starts each of ${calls} delayed calls (1 s to 60 s) within ${toleranceMs} ms of its due time, none early`, async () => {
  td.add(() => ns.destroy());
  const startedAt = new Map<number, number>();
  let allStarted: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allStarted = resolve));
  const service = await startService({
    urls: amqpUrl(), namespace: ns.namespace, name: ns.service('due'), prefetch: 64,
    methods: {
      'due.run': {
        handler: (p) => {
          const n = (p as { n: number }).n;
          startedAt.set(n, Date.now());
          if (startedAt.size === calls) allStarted();
          return n;
        },
      },
    },
  });
  td.add(() => service.close());
  const client = await connectClient({ urls: amqpUrl(), namespace: ns.namespace, defaultTimeoutMs: 30_000 });
  td.add(() => client.close());

  // Due times from 1 s to 60 s after now, evenly spread with odd milliseconds (no bucket could hit them all), sent shuffled.
  const base = Date.now();
  const due = Array.from({ length: calls }, (_, n) => base + 1000 + Math.round((n * 59_000) / (calls - 1)) + (n % 7) * 13);
  const order = [...due.keys()].sort((a, b) => ((a * 7919) % calls) - ((b * 7919) % calls));
  const answers = order.map((n) => client.call('due.run', { n }, { notBefore: due[n] as number }));
  await done;
  await Promise.all(answers);

  const lateness = due.map((at, n) => (startedAt.get(n) as number) - at);
  const early = lateness.filter((ms) => ms < 0);
  const late = lateness.filter((ms) => ms > toleranceMs);
  const sorted = [...lateness].sort((a, b) => a - b);
  // The figures, for the record (docs/scheduling.md quotes a run).
  process.stdout.write(`delayed calls: ${calls}, lateness ms: min ${sorted[0]}, median ${sorted[calls >> 1]}, p99 ${sorted[Math.floor(calls * 0.99)]}, max ${sorted[calls - 1]}\n`);
  expect(early).toEqual([]);
  expect(late).toEqual([]);
}, 120_000);
