/**
 * A worker process of the scaling bench (bench/scaling-bench.ts): a Warren
 * service `scale` serving `scale.add` on the URL list it is given (its first
 * node first), with the queue type the options resolve for that list (quorum
 * for several nodes) unless SCALE_QUEUE_TYPE says otherwise.
 *
 *   SCALE_URLS=amqp://..,amqp://.. SCALE_NAMESPACE=ns node --import tsx bench/scaling-worker.ts
 *
 * Prints `ready`; SIGTERM closes it.
 */
import { startService, type ServiceOptions } from '@warren/amqp';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`scaling-worker: ${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const queueType = process.env['SCALE_QUEUE_TYPE'] as ServiceOptions['queueType'] | undefined;
  const service = await startService({
    urls: env('SCALE_URLS').split(','),
    namespace: env('SCALE_NAMESPACE'),
    name: 'scale',
    prefetch: Number(process.env['SCALE_PREFETCH'] || 64),
    ...(queueType ? { queueType } : {}),
    methods: { 'scale.add': { handler: (p) => (p as number[])[0]! + (p as number[])[1]! } },
  });
  process.on('SIGTERM', () => void service.close().finally(() => process.exit(0)));
  process.stdout.write(`ready ${service.options.queueType}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`scaling-worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
