// Which way `npm start` runs: the broker and services as processes on RabbitMQ and Redis (found in
// the environment, on the default ports, or started with testcontainers: ensure-services.ts), or
// embedded in one process in memory when none of that is possible (scripts/embedded.ts).
import { ServicesUnavailableError, ensureServices, probeTcp, startWithTestcontainers, type Provided } from './ensure-services';

export type StartMode =
  | { readonly kind: 'processes'; readonly provided: Provided }
  /** `why`: what made it embedded (WARREN_EMBEDDED=1, or what was found missing). */
  | { readonly kind: 'embedded'; readonly why: string };

/**
 * WARREN_EMBEDDED=1 forces embedded mode, WARREN_EMBEDDED=0 forbids it (then no RabbitMQ is an error,
 * as before). Unset: embedded exactly when AMQP_URL and REDIS_URL are both unset, nothing answers on
 * the default ports and no Docker engine can start them; a URL that is set is never replaced by memory.
 */
export async function chooseStartMode(env: NodeJS.ProcessEnv, ensure: (env: NodeJS.ProcessEnv) => Promise<Provided> = defaultEnsure): Promise<StartMode> {
  const asked = env['WARREN_EMBEDDED']?.trim().toLowerCase();
  if (asked !== undefined && asked !== '' && !['1', 'true', '0', 'false'].includes(asked)) {
    throw new RangeError(`WARREN_EMBEDDED must be 1 or 0, got ${JSON.stringify(env['WARREN_EMBEDDED'])}`);
  }
  if (asked === '1' || asked === 'true') return { kind: 'embedded', why: 'WARREN_EMBEDDED=1' };
  try {
    return { kind: 'processes', provided: await ensure(env) };
  } catch (err) {
    const allowed = asked !== '0' && asked !== 'false' && !env['AMQP_URL'] && !env['REDIS_URL'];
    if (!allowed || !(err instanceof ServicesUnavailableError)) throw err;
    return { kind: 'embedded', why: 'no RabbitMQ or Redis answers, AMQP_URL and REDIS_URL are unset, and no Docker engine is reachable to start them' };
  }
}

const defaultEnsure = (env: NodeJS.ProcessEnv): Promise<Provided> => ensureServices({ env, probe: probeTcp, startContainers: startWithTestcontainers });
