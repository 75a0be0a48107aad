// Makes sure RabbitMQ and Redis are there for the integration tests (and for
// anything else that needs them, e.g. a start script):
//
// 1. AMQP_URL / REDIS_URL set: used as they are, nothing is checked here.
// 2. Unset, and something answers on the default port: the local default is used.
// 3. Unset and nothing answers: started with testcontainers when a Docker
//    engine is reachable (the URLs are then exported in process.env, which the
//    jest workers inherit; testcontainers' reaper removes the containers when
//    this process exits).
// 4. Otherwise: one error that says how to provide them (`npm start` runs embedded instead:
//    scripts/start-mode.ts).
//
// The default URLs themselves can be moved with WARREN_DEFAULT_AMQP_URL / WARREN_DEFAULT_REDIS_URL,
// and WARREN_DOCKER=off leaves Docker alone: a test plays a machine with nothing installed that way.
//
// The check in cases 1 and 2 is a TCP connect to localhost: a few milliseconds.
import { Socket } from 'node:net';

export const defaults = {
  amqpUrl: 'amqp://guest:guest@127.0.0.1:5672',
  redisUrl: 'redis://127.0.0.1:6379',
  rabbitmqImage: 'rabbitmq:3.13-management-alpine',
  redisImage: 'redis:7-alpine',
} as const;

export type Dependency = 'rabbitmq' | 'redis';

/** How each dependency was provided. */
export type Provided = Readonly<Record<Dependency, 'env' | 'local' | 'container'>>;

export interface EnsureDeps {
  readonly env: NodeJS.ProcessEnv;
  /** Resolves true when something accepts TCP connections at host:port. */
  readonly probe: (host: string, port: number, timeoutMs: number) => Promise<boolean>;
  /** Starts the missing dependencies in containers, resolving with their URLs; rejects when no Docker engine is reachable. */
  readonly startContainers: (missing: readonly Dependency[]) => Promise<Partial<Record<Dependency, string>>>;
}

export class ServicesUnavailableError extends Error {
  override readonly name = 'ServicesUnavailableError';
  readonly code = 'TEST_SERVICES_UNAVAILABLE';
}

/** Resolves true when a TCP connection to host:port opens within timeoutMs. */
export function probeTcp(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.connect(port, host);
  });
}

/** Starts RabbitMQ and/or Redis with testcontainers (loaded only on this path: it is heavy). */
export async function startWithTestcontainers(missing: readonly Dependency[]): Promise<Partial<Record<Dependency, string>>> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  // Throws "Could not find a working container runtime strategy" without a Docker engine.
  await getContainerRuntimeClient();
  const urls: Partial<Record<Dependency, string>> = {};
  await Promise.all(
    missing.map(async (dep) => {
      if (dep === 'rabbitmq') {
        const { RabbitMQContainer } = await import('@testcontainers/rabbitmq');
        const c = await new RabbitMQContainer(defaults.rabbitmqImage).start();
        urls.rabbitmq = c.getAmqpUrl();
      } else {
        const { RedisContainer } = await import('@testcontainers/redis');
        const c = await new RedisContainer(defaults.redisImage).start();
        urls.redis = c.getConnectionUrl();
      }
    }),
  );
  return urls;
}

const envName: Record<Dependency, 'AMQP_URL' | 'REDIS_URL'> = { rabbitmq: 'AMQP_URL', redis: 'REDIS_URL' };

/** The URLs used when AMQP_URL / REDIS_URL are unset: the local defaults, unless WARREN_DEFAULT_AMQP_URL / WARREN_DEFAULT_REDIS_URL move them. */
export function defaultUrls(env: NodeJS.ProcessEnv): Record<Dependency, string> {
  return { rabbitmq: env['WARREN_DEFAULT_AMQP_URL'] || defaults.amqpUrl, redis: env['WARREN_DEFAULT_REDIS_URL'] || defaults.redisUrl };
}

/** Where RabbitMQ and Redis are found without starting anything: named by the env, answering on the default port, or missing. */
export async function findServices(env: NodeJS.ProcessEnv, probe: EnsureDeps['probe']): Promise<[Dependency, 'env' | 'local' | 'missing'][]> {
  const defaultUrl = defaultUrls(env);
  return Promise.all(
    (['rabbitmq', 'redis'] as const).map(async (dep): Promise<[Dependency, 'env' | 'local' | 'missing']> => {
      if (env[envName[dep]]) return [dep, 'env'];
      const url = new URL(defaultUrl[dep]);
      return [dep, (await probe(url.hostname, Number(url.port), 500)) ? 'local' : 'missing'];
    }),
  );
}

/** Resolves when a Docker engine testcontainers can use is reachable; rejects with why not (WARREN_DOCKER=off counts as none). */
export async function checkDocker(env: NodeJS.ProcessEnv): Promise<void> {
  // WARREN_DOCKER=off: behave as on a machine without Docker, whatever is installed (the embedded test's bare machine).
  if (env['WARREN_DOCKER'] === 'off') throw new Error('Docker not used (WARREN_DOCKER=off)');
  const { getContainerRuntimeClient } = await import('testcontainers');
  // Throws "Could not find a working container runtime strategy" without a Docker engine.
  await getContainerRuntimeClient();
}

/**
 * Decides, for RabbitMQ and Redis, where the tests find them, starting
 * containers if it must; sets AMQP_URL / REDIS_URL in `deps.env` for started
 * ones. Throws {@link ServicesUnavailableError} with instructions otherwise.
 */
export async function ensureServices(deps: EnsureDeps = { env: process.env, probe: probeTcp, startContainers: startWithTestcontainers }): Promise<Provided> {
  const defaultUrl = defaultUrls(deps.env);
  const states = await findServices(deps.env, deps.probe);
  const missing = states.filter(([, s]) => s === 'missing').map(([d]) => d);
  const provided = Object.fromEntries(states) as Record<Dependency, 'env' | 'local' | 'container'>;
  if (missing.length === 0) return provided;
  let urls: Partial<Record<Dependency, string>>;
  try {
    // WARREN_DOCKER=off: behave as on a machine without Docker, whatever is installed (the embedded test's bare machine).
    if (deps.env['WARREN_DOCKER'] === 'off') throw new Error('Docker not used (WARREN_DOCKER=off)');
    urls = await deps.startContainers(missing);
  } catch (err) {
    const what = missing.map((d) => `${d === 'rabbitmq' ? 'RabbitMQ' : 'Redis'} (nothing answers at ${redactPassword(defaultUrl[d])}, ${envName[d]} unset)`).join(' and ');
    throw new ServicesUnavailableError(
      `Integration tests need RabbitMQ and Redis, and ${what}; no Docker engine was reachable to start them with testcontainers (${err instanceof Error ? err.message : String(err)}). ` +
        'Provide them in one of three ways: set AMQP_URL and REDIS_URL to running servers; start them locally on the default ports ' +
        '(e.g. `docker compose up -d rabbitmq redis`, or `rabbitmq-server -detached` and `redis-server --daemonize yes`); or make a Docker engine reachable (DOCKER_HOST) so testcontainers can start them.',
      { cause: err },
    );
  }
  for (const dep of missing) {
    const url = urls[dep];
    if (!url) throw new ServicesUnavailableError(`testcontainers started no ${dep}`);
    deps.env[envName[dep]] = url;
    provided[dep] = 'container';
  }
  return provided;
}

export function redactPassword(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}
