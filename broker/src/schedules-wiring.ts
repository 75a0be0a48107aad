import type { Logger } from '@warren/logger';
import { ScheduleControl, Scheduler, ServiceScheduleSync, scheduleMethods, type ScheduleStore, type SchedulerOptions, type ServedMethods } from '@warren/schedules';
import type { Broker, BrokerOptions } from './broker';

/** How the broker runs its scheduler. */
export interface SchedulesWiringOptions {
  /** Whether this broker fires schedules (a scheduler racing for the lease) or only serves `schedule.*`. @default true */
  readonly run?: boolean;
  /** The scheduler's lease, grace and tick (@warren/schedules `schedulerDefaults`). @default those defaults */
  readonly scheduler?: Pick<SchedulerOptions, 'leaseMs' | 'graceMs' | 'tickMs'>;
}

/**
 * What a schedule store gives the broker (Redis, or memory in embedded mode): the `schedule.*`
 * methods (`schedule.add` checking the method is served and its params fit, against the catalogue), `warren_schedule_*_total` on /metrics, and a scheduler on the broker's own client, so
 * fired calls are relayed and tracked like any other. `options` goes into startBroker; `attach`
 * starts the scheduler once the broker's client exists, and keeps the schedules services announce
 * (defined in code) in the store; `close` stops both (before the broker closes).
 */
export function schedulesWiring(store: ScheduleStore, options: SchedulesWiringOptions = {}): {
  readonly options: Pick<BrokerOptions, 'serviceMethods' | 'scheduleCounts'>;
  attach(broker: Broker, logger: Logger): void;
  close(): Promise<void>;
} {
  const late: { broker?: Broker; scheduler?: Scheduler; sync?: ServiceScheduleSync } = {};
  const client = (): Broker['client'] => {
    if (late.broker === undefined) throw new Error('schedules wiring used before attach');
    return late.broker.client;
  };
  // schedule.add checks the method against what the live services announce (the gateway's catalogue),
  // the broker's own methods included before its first announcement is heard.
  const served: ServedMethods = (method) => {
    const broker = late.broker;
    if (broker === undefined) return undefined;
    const own = broker.service.options.methods;
    const announced = broker.gateway.catalogue.current().methods.get(method) ?? (Object.hasOwn(own, method) ? own[method] : undefined);
    return announced === undefined ? undefined : announced.params === undefined ? {} : { params: announced.params };
  };
  const control = new ScheduleControl(store, client, (schedule, fired) => late.scheduler?.firedNow(schedule, fired), served);
  return {
    options: {
      serviceMethods: scheduleMethods(control, store.durable),
      scheduleCounts: () => late.scheduler?.stats() ?? new Map(),
    },
    attach(broker, logger) {
      late.broker = broker;
      late.sync = new ServiceScheduleSync(store, broker.registry, logger);
      late.sync.start();
      if (options.run === false) return;
      late.scheduler = new Scheduler({ store, client: broker.client, logger, ...options.scheduler });
      late.scheduler.start();
    },
    close: async () => {
      await late.sync?.close();
      await late.scheduler?.close();
    },
  };
}
