// Embedded mode with the example services: the broker's embedded composition (@warren/broker's
// startEmbedded: the in-memory broker, in-flight store and schedules) running the same services
// `npm start` runs as processes, each built by its own package's composition; only the connection
// and the stores differ here (docs/embedded.md).
//
// Nothing is durable: queues, jobs, in-flight records and the audit log live in this process and
// end with it; the jobs service announces `durable: false` (a temporary classic queue) instead of a quorum queue.
import { readServiceEnv, startService, type Env, type WarrenService } from '@warren/amqp';
import { startEmbedded as startEmbeddedBroker, type BrokerOptions, type EmbeddedBroker, type EmbeddedHost, type EmbeddedService } from '@warren/broker';
import { MemoryEventLog } from '@warren/eventlog';
import { createMemoryTracker, memoryInflightView } from '@warren/inflight';
import type { Logger } from '@warren/logger';
import { auditDefaults, auditService, auditSettings } from '@warren/service-audit';
import { calculatorDefaults, calculatorService } from '@warren/service-calculator';
import { jobsDefaults, jobsService, jobsSettings, jobsTrackerOptions } from '@warren/service-jobs';

/** What runs by default, as `npm start` runs it in processes (scripts/start.ts). */
export const embeddedInstances: readonly EmbeddedInstance[] = [
  { name: 'calculator-1', service: 'calculator' },
  { name: 'calculator-2', service: 'calculator' },
  { name: 'audit', service: 'audit' },
  { name: 'jobs-1', service: 'jobs' },
  { name: 'jobs-2', service: 'jobs' },
];

/** One service instance: its instance id, and which example service it is. */
export interface EmbeddedInstance {
  readonly name: string;
  readonly service: 'calculator' | 'audit' | 'jobs';
}

/** For tests: fewer or other instances, and broker options the environment has no variable for. */
export interface EmbeddedOptions {
  readonly instances?: readonly EmbeddedInstance[];
  readonly broker?: Omit<Partial<BrokerOptions>, 'logger' | 'mode'>;
}

export interface EmbeddedSystem extends EmbeddedBroker {
  /** The audit and jobs services' event log. */
  readonly events: MemoryEventLog;
}

/**
 * Starts the whole system in this process. `env` is read the way the processes read theirs
 * (GATEWAY_*, WARREN_NAMESPACE, JOBS_*, AUDIT_*, LOG_LEVEL; AMQP_URL and REDIS_URL are ignored).
 * `logger(name)` gives each part its logger, named as the process would be.
 *
 * @example
 * const system = await startEmbedded({ GATEWAY_AUTH: 'none', GATEWAY_PORT: '0' }, () => silentLogger());
 * await fetch(`${system.url}/rpc`, { method: 'POST', body: '{"jsonrpc":"2.0","method":"add","params":[4,5],"id":1}' });
 * await system.close();
 */
export async function startEmbedded(env: Env, logger: (name: string) => Logger, opts: EmbeddedOptions = {}): Promise<EmbeddedSystem> {
  // One log for audit and jobs, as they share one Redis: their streams and records are named apart.
  const events = new MemoryEventLog({ maxEntries: auditSettings(env).maxEntries, ttlMs: auditSettings(env).ttlMs });
  const services = (opts.instances ?? embeddedInstances).map((instance) => exampleService(instance, events));
  let system: EmbeddedBroker;
  try {
    system = await startEmbeddedBroker(env, logger, { services, ...(opts.broker === undefined ? {} : { broker: opts.broker }) });
  } catch (err) {
    await events.close().catch(() => undefined);
    throw err;
  }
  return {
    ...system,
    events,
    close: async () => {
      await system.close();
      await events.close();
    },
  };
}

/** One example service instance, built by its own package's composition, on a connection of its own. */
function exampleService(instance: EmbeddedInstance, events: MemoryEventLog): EmbeddedService {
  return async (host: EmbeddedHost): Promise<WarrenService> => {
    const log = host.logger(instance.name);
    const connection = host.bus.connect();
    const instanceId = instance.name;
    let service: WarrenService;
    switch (instance.service) {
      case 'calculator': {
        const config = { ...readServiceEnv(host.env, calculatorDefaults), name: calculatorDefaults.name, instanceId };
        const tracker = createMemoryTracker(host.inflight, { keyPrefix: config.keyPrefix, logger: log });
        service = await startService({ connection, ...calculatorService(config, { logger: log, tracker }) });
        break;
      }
      case 'audit': {
        const config = { ...readServiceEnv(host.env, auditDefaults), name: auditDefaults.name, instanceId };
        service = await startService({ connection, ...auditService(config, { logger: log, store: events, description: 'Records notifications (in memory: embedded mode)' }) });
        break;
      }
      case 'jobs': {
        const config = { ...readServiceEnv(host.env, jobsDefaults), name: jobsDefaults.name, instanceId, ...jobsSettings(host.env), durable: false };
        const tracker = createMemoryTracker(host.inflight, jobsTrackerOptions(config, log));
        const view = memoryInflightView(host.inflight, { keyPrefix: config.keyPrefix, logger: log });
        host.closeAfterServices(view);
        service = await startService({ connection, ...jobsService(config, { logger: log, store: events, tracker, status: (callId) => view.status(callId) }) });
        break;
      }
    }
    log.info({ mode: 'embedded', instanceId: service.instanceId }, 'service ready');
    return service;
  };
}
