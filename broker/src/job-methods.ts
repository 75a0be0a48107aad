import type { ServiceRegistry } from '@warren/amqp';

/** How the gateway sends a call to a job-style method; undefined for any other method. */
export interface JobCallOptions {
  /** Persist the request (the method's queue is durable): it survives a RabbitMQ restart. */
  readonly persistent: boolean;
  /** The request waits in the queue for a worker instead of failing -32002 when none is running. */
  readonly whenNoConsumer: 'queue';
}

/**
 * The methods announced job-style (`jobStyle: true`), remembered after their
 * instances leave: a job submitted while every worker is stopped is exactly
 * the call that must queue (docs/protocol.md "Job-style calls may queue"), as
 * `warren call` does. Later announcements win (a method that stops being
 * job-style is gated again).
 *
 * @example
 * const jobs = jobMethods(registry);
 * jobs.optionsFor('report.render'); // { persistent: true, whenNoConsumer: 'queue' }
 */
export function jobMethods(registry: Pick<ServiceRegistry, 'list' | 'on' | 'off'>): { optionsFor(method: string): JobCallOptions | undefined; close(): void } {
  const byMethod = new Map<string, JobCallOptions | undefined>();
  const learn = (): void => {
    // Oldest first, so the newest instance's description of a method wins.
    for (const instance of [...registry.list()].sort((a, b) => a.startedAt - b.startedAt)) {
      for (const m of instance.methods) byMethod.set(m.name, m.jobStyle === true ? { persistent: instance.durable, whenNoConsumer: 'queue' } : undefined);
    }
  };
  learn();
  registry.on('change', learn);
  return { optionsFor: (method) => byMethod.get(method), close: () => void registry.off('change', learn) };
}
