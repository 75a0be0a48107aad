import type { ResponseMessage } from '@warren/jsonrpc';
import type { HandlerContext } from './context';
import { planRetry, retryDelays, retrySchedule, type RetryPlan, type RetryPolicy } from './retry';
import type { ServiceMethod } from './service-options';

/**
 * The retry policies of a service's methods (retry.ts): what each allows, the waits its delay
 * queues are declared for, and what a failed call's next step is.
 */
export class MethodRetries {
  /** What the handlers of methods with a retry policy threw, by their context. */
  private readonly failures = new WeakMap<HandlerContext, unknown>();
  private readonly policies = new Map<string, RetryPolicy>();
  /** Each policy's waits after attempt 1, 2, ... (retrySchedule), for the tracker: a lost worker's call waits them too. */
  private readonly schedules = new Map<string, readonly number[]>();
  /** The waits a delay queue is declared for (topology.ts): a retry publishes only to one of them. */
  readonly delayQueues: ReadonlySet<number>;

  constructor(methods: Readonly<Record<string, ServiceMethod>>) {
    for (const [name, def] of Object.entries(methods)) {
      if (!def.retry) continue;
      this.policies.set(name, def.retry);
      this.schedules.set(name, retrySchedule(def.retry));
    }
    this.delayQueues = new Set(retryDelays([...this.policies.values()]));
  }

  /** The method as the dispatcher registers it: with a policy, wrapped so the error its handler throws (not only the answer) is seen by {@link plan}. */
  registered(name: string, def: ServiceMethod): ServiceMethod {
    if (!this.policies.has(name)) return def;
    const failures = this.failures;
    return {
      ...def,
      handler: async (params, ctx) => {
        try {
          return await def.handler(params, ctx);
        } catch (err) {
          failures.set(ctx, err);
          throw err;
        }
      },
    };
  }

  /** The attempts a method's policy allows, if it has one. */
  attemptsOf(method: string): number | undefined {
    return this.policies.get(method)?.attempts;
  }

  /** The waits of a method's policy, if it has one. */
  scheduleOf(method: string): readonly number[] | undefined {
    return this.schedules.get(method);
  }

  /** What comes of a call's answer under its method's policy: undefined to answer it as it is. */
  plan(method: string, response: ResponseMessage, ctx: HandlerContext, attempt: number, deadline: number): RetryPlan | undefined {
    const policy = this.policies.get(method);
    if (!policy) return undefined;
    const plan = planRetry(policy, response, this.failures.get(ctx), attempt, deadline, Date.now());
    return plan.action === 'answer' ? undefined : plan;
  }
}
