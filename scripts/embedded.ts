// Embedded mode: the broker and the example services in ONE process, over the in-memory broker
// (MemoryBroker, @warren/amqp) and in-memory stores (MemoryInflightStore, MemoryEventLog), for a
// machine with Node alone. The services are the same ones `npm start` runs as processes: their
// options come from each service's src/service.ts; only the connectTo and the stores differ here.
//
// Nothing is durable: queues, jobs, in-flight records and the audit log live in this process and
// end with it. The broker says so ("mode": "embedded" in /readyz and /services), and the jobs
// service announces `durable: false` (a temporary classic queue) instead of a quorum queue (docs/embedded.md).
import { readServiceEnv, startService, type Env, type WarrenService } from '@warren/amqp';
import { MemoryBroker } from '@warren/amqp-transport';
import { MemoryEventLog } from '@warren/eventlog';
import { MemoryInflightStore, createMemoryTracker, memoryInflightView } from '@warren/inflight';
import { MemoryScheduleStore } from '@warren/schedules';
import type { Logger } from '@warren/logger';
import { startBroker, type Broker, type BrokerOptions } from '../broker/src/broker';
import { brokerOptionsFromEnv } from '../broker/src/env';
import { inflightWiring } from '../broker/src/inflight-wiring';
import { schedulesWiring } from '../broker/src/schedules-wiring';
import { auditDefaults, auditService, auditSettings } from '../services/audit/src/service';
import { calculatorDefaults, calculatorService } from '../services/calculator/src/service';
import { jobsDefaults, jobsService, jobsSettings, jobsTrackerOptions } from '../services/jobs/src/service';

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

export interface EmbeddedSystem {
  readonly broker: Broker;
  /** The gateway's base URL, once listening. */
  readonly url: string;
  readonly services: readonly WarrenService[];
  /** The in-memory broker everything runs on: `bus.connect()` gives a test its own connection (a client, another service). */
  readonly bus: MemoryBroker;
  /** The in-flight store every tracker and view here shares. */
  readonly inflight: MemoryInflightStore;
  /** The audit and jobs services' event log. */
  readonly events: MemoryEventLog;
  /** Stops the gateway first (nothing new arrives), then the services (running calls drain), then the in-memory broker. */
  close(): Promise<void>;
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
  const bus = new MemoryBroker();
  const inflight = new MemoryInflightStore();
  // One log for audit and jobs, as they share one Redis: their streams and records are named apart.
  const events = new MemoryEventLog({ maxEntries: auditSettings(env).maxEntries, ttlMs: auditSettings(env).ttlMs });
  const services: WarrenService[] = [];
  const views: { close(): Promise<void> }[] = [];
  // Schedules in memory: `schedule.list` answers `durable: false`, and a restart forgets them (docs/scheduling.md).
  const schedules = schedulesWiring(new MemoryScheduleStore());
  let broker: Broker | undefined;
  const close = async (): Promise<void> => {
    await schedules.close();
    await broker?.close();
    // Each service drains its own running calls; they stop together, as separate processes would.
    await Promise.all(services.map((s) => s.close()));
    await Promise.all(views.map((v) => v.close()));
    await bus.close();
    await events.close();
  };
  try {
    for (const instance of opts.instances ?? embeddedInstances) services.push(await startInstance(instance, env, { bus, inflight, events, logger, views }));
    const { redisUrl: _redis, keyPrefix, logLevel: _level, urls: _urls, ...options } = brokerOptionsFromEnv(env);
    const brokerLog = logger('broker');
    const view = memoryInflightView(inflight, { keyPrefix: keyPrefix ?? options.namespace ?? 'warren', logger: brokerLog });
    views.push(view);
    const wiring = inflightWiring(view);
    const { scheduler: _scheduler, ...brokerOptions } = options;
    const serviceMethods = { ...opts.broker?.serviceMethods, ...wiring.options.serviceMethods, ...schedules.options.serviceMethods };
    broker = await startBroker({ ...brokerOptions, ...opts.broker, connection: bus.connect(), mode: 'embedded', logger: brokerLog, ...wiring.options, ...schedules.options, serviceMethods });
    wiring.attach(broker, brokerLog);
    schedules.attach(broker, brokerLog);
    const url = await broker.listen();
    await broker.registry.discovered();
    brokerLog.info({ url, mode: 'embedded', namespace: options.namespace ?? 'warren', auth: options.auth }, 'broker ready');
    return { broker, url, services, bus, inflight, events, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}

interface Shared {
  readonly bus: MemoryBroker;
  readonly inflight: MemoryInflightStore;
  readonly events: MemoryEventLog;
  readonly logger: (name: string) => Logger;
  readonly views: { close(): Promise<void> }[];
}

/** One service instance, built by its own src/service.ts, on a connection of its own. */
async function startInstance(instance: EmbeddedInstance, env: Env, shared: Shared): Promise<WarrenService> {
  const log = shared.logger(instance.name);
  const connection = shared.bus.connect();
  const instanceId = instance.name;
  let service: WarrenService;
  switch (instance.service) {
    case 'calculator': {
      const config = { ...readServiceEnv(env, calculatorDefaults), name: calculatorDefaults.name, instanceId };
      const tracker = createMemoryTracker(shared.inflight, { keyPrefix: config.keyPrefix, logger: log });
      service = await startService({ connection, ...calculatorService(config, { logger: log, tracker }) });
      break;
    }
    case 'audit': {
      const config = { ...readServiceEnv(env, auditDefaults), name: auditDefaults.name, instanceId };
      service = await startService({ connection, ...auditService(config, { logger: log, store: shared.events, description: 'Records notifications (in memory: embedded mode)' }) });
      break;
    }
    case 'jobs': {
      const config = { ...readServiceEnv(env, jobsDefaults), name: jobsDefaults.name, instanceId, ...jobsSettings(env), durable: false };
      const tracker = createMemoryTracker(shared.inflight, jobsTrackerOptions(config, log));
      const view = memoryInflightView(shared.inflight, { keyPrefix: config.keyPrefix, logger: log });
      shared.views.push(view);
      service = await startService({ connection, ...jobsService(config, { logger: log, store: shared.events, tracker, status: (callId) => view.status(callId) }) });
      break;
    }
  }
  log.info({ mode: 'embedded', instanceId: service.instanceId }, 'service ready');
  return service;
}
