import { positiveIntFromEnv, readServiceEnv } from '@warren/amqp';

describe('readServiceEnv', () => {
  it('applies the service defaults and treats empty variables as unset', () => {
    expect(readServiceEnv({ PREFETCH: '', REDIS_URL: '' }, { name: 'jobs', prefetch: 1 })).toEqual({
      amqpUrls: ['amqp://guest:guest@127.0.0.1:5672'], namespace: 'warren', name: 'jobs', instanceId: undefined,
      prefetch: 1, redisUrl: undefined, keyPrefix: 'warren', logLevel: 'info', shutdownTimeoutMs: 15_000, supervised: false,
    });
  });

  it('reads cluster URLs, the namespace as key prefix, and explicit values', () => {
    const env = readServiceEnv({ AMQP_URL: 'amqp://a, amqp://b', WARREN_NAMESPACE: 'ns', SERVICE_NAME: 's', PREFETCH: '8' }, { name: 'x', prefetch: 1 });
    expect(env).toMatchObject({ amqpUrls: ['amqp://a', 'amqp://b'], namespace: 'ns', keyPrefix: 'ns', name: 's', prefetch: 8 });
  });

  it('reads the shutdown bound and whether stdin is the supervisor\'s pipe (only when npm start says so)', () => {
    expect(readServiceEnv({ SHUTDOWN_TIMEOUT_MS: '5000', WARREN_SUPERVISOR: 'stdin' }, { name: 'x', prefetch: 1 })).toMatchObject({ shutdownTimeoutMs: 5000, supervised: true });
    expect(readServiceEnv({ WARREN_SUPERVISOR: 'yes' }, { name: 'x', prefetch: 1 }).supervised).toBe(false);
  });

  it('names the variable that is not a positive integer', () => {
    expect(() => positiveIntFromEnv({ PREFETCH: 'lots' }, 'PREFETCH', 1)).toThrow(/PREFETCH/);
    expect(() => positiveIntFromEnv({ PREFETCH: '0' }, 'PREFETCH', 1)).toThrow(/PREFETCH/);
  });
});

describe('readServiceEnv through the environment schema', () => {
  it('names the variable that does not parse, with the code of an environment error', () => {
    for (const env of [{ PREFETCH: 'lots' }, { SHUTDOWN_TIMEOUT_MS: '0' }, { WARREN_OPS_PORT: '70000' }]) {
      expect(() => readServiceEnv(env, { name: 'x', prefetch: 1 })).toThrow(expect.objectContaining({ code: 'WARREN_BAD_ENV', variable: Object.keys(env)[0] }));
    }
  });
});
