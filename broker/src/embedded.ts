// Embedded mode: the broker and services in ONE process, over the in-memory broker (MemoryBroker,
// @warren/amqp-transport) and in-memory stores (in-flight records, schedules), for a machine with Node alone.
// A product feature, so the broker package composes it; which services run is the caller's choice
// (scripts/embedded.ts runs the examples, each built from its package's own composition).
//
// Nothing is durable: queues, in-flight records and schedules live in this process and end with it.
// The broker says so ("mode": "embedded" in /readyz and /services; docs/embedded.md).
import type { Env, WarrenService } from '@warren/amqp';
import { MemoryBroker } from '@warren/amqp-transport';
import { MemoryInflightStore, memoryInflightView } from '@warren/inflight';
import type { Logger } from '@warren/logger';
import { MemoryScheduleStore } from '@warren/schedules';
import { startBroker, type Broker, type BrokerOptions } from './broker';
import { brokerOptionsFromEnv } from './env';
import { inflightWiring } from './inflight-wiring';
import { schedulesWiring } from './schedules-wiring';

/** What the embedded system lends each service it starts. */
export interface EmbeddedHost {
  /** The in-memory broker: `bus.connect()` gives a service its own connection. */
  readonly bus: MemoryBroker;
  /** The in-flight store every tracker and view here shares. */
  readonly inflight: MemoryInflightStore;
  /** The environment, read the way the processes read theirs. */
  readonly env: Env;
  /** Each part's logger, named as its process would be. */
  readonly logger: (name: string) => Logger;
  /** Closes `resource` once every service has stopped (a view a service reads through). */
  closeAfterServices(resource: { close(): Promise<void> }): void;
}

/** Starts one service instance on the host (on a connection of its own). */
export type EmbeddedService = (host: EmbeddedHost) => Promise<WarrenService>;

export interface EmbeddedOptions {
  /** The service instances, started in order before the broker (its first discovery finds them). */
  readonly services: readonly EmbeddedService[];
  /** Broker options the environment has no variable for (tests). */
  readonly broker?: Omit<Partial<BrokerOptions>, 'logger' | 'mode'>;
}

export interface EmbeddedBroker {
  readonly broker: Broker;
  /** The gateway's base URL, once listening. */
  readonly url: string;
  readonly services: readonly WarrenService[];
  /** The in-memory broker everything runs on: `bus.connect()` gives a test its own connection (a client, another service). */
  readonly bus: MemoryBroker;
  /** The in-flight store every tracker and view here shares. */
  readonly inflight: MemoryInflightStore;
  /** Stops the gateway first (nothing new arrives), then the services (running calls drain), then the in-memory broker. */
  close(): Promise<void>;
}

/**
 * Starts the broker and `services` in this process. `env` is read the way the broker process reads
 * its own (GATEWAY_*, WARREN_NAMESPACE, LOG_LEVEL; AMQP_URL and REDIS_URL are ignored).
 *
 * @example
 * const system = await startEmbedded({ GATEWAY_AUTH: 'none', GATEWAY_PORT: '0' }, () => silentLogger(), {
 *   services: [({ bus }) => startService({ connection: bus.connect(), name: 'calculator', methods })],
 * });
 * await fetch(`${system.url}/rpc`, { method: 'POST', body: '{"jsonrpc":"2.0","method":"add","params":[4,5],"id":1}' });
 * await system.close();
 */
export async function startEmbedded(env: Env, logger: (name: string) => Logger, opts: EmbeddedOptions): Promise<EmbeddedBroker> {
  const bus = new MemoryBroker();
  const inflight = new MemoryInflightStore();
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
  };
  const host: EmbeddedHost = { bus, inflight, env, logger, closeAfterServices: (resource) => views.push(resource) };
  try {
    for (const start of opts.services) services.push(await start(host));
    const { redisUrl: _redis, keyPrefix, logLevel: _level, urls: _urls, ...options } = brokerOptionsFromEnv(env);
    const brokerLog = logger('broker');
    const view = memoryInflightView(inflight, { keyPrefix: keyPrefix ?? options.namespace ?? 'warren', logger: brokerLog });
    views.push(view);
    const wiring = inflightWiring(view);
    const { scheduler: _scheduler, ...brokerOptions } = options;
    const serviceMethods = { ...opts.broker?.serviceMethods, ...wiring.options.serviceMethods, ...schedules.options.serviceMethods };
    const consoleOptions = brokerOptions.console === undefined && opts.broker?.console === undefined ? {} : { console: { ...brokerOptions.console, ...opts.broker?.console } };
    broker = await startBroker({ ...brokerOptions, ...opts.broker, ...consoleOptions, connection: bus.connect(), mode: 'embedded', logger: brokerLog, ...wiring.options, ...schedules.options, serviceMethods });
    wiring.attach(broker, brokerLog);
    schedules.attach(broker, brokerLog);
    const url = await broker.listen();
    await broker.registry.discovered();
    brokerLog.info({ url, mode: 'embedded', namespace: options.namespace ?? 'warren', auth: options.auth }, 'broker ready');
    return { broker, url, services, bus, inflight, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
