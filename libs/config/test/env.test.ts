import { EnvError, envGiven, envValue } from '../src/env-read';
import { envSchema, type EnvName } from '../src/env-schema';

const errorOf = (fn: () => unknown): EnvError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof EnvError) return err;
    throw err;
  }
  throw new Error('did not throw');
};

describe('envValue / envGiven', () => {
  it('gives the schema default when unset, empty or blank, and undefined where there is none', () => {
    for (const env of [{}, { WARREN_NAMESPACE: '' }, { WARREN_NAMESPACE: '  ' }]) expect(envValue(env, 'WARREN_NAMESPACE')).toBe('warren');
    expect(envValue({}, 'AMQP_URL')).toEqual(['amqp://guest:guest@127.0.0.1:5672']);
    expect(envValue({}, 'SHUTDOWN_TIMEOUT_MS')).toBe(15_000);
    expect(envValue({}, 'SCHEDULER')).toBe('on');
    expect(envValue({}, 'REDIS_URL')).toBeUndefined();
    expect(envGiven({}, 'WARREN_NAMESPACE')).toBeUndefined();
  });

  it('parses each kind', () => {
    expect(envValue({ AMQP_URL: 'amqp://a, amqp://b,' }, 'AMQP_URL')).toEqual(['amqp://a', 'amqp://b']);
    expect(envValue({ PREFETCH: ' 8 ' }, 'PREFETCH')).toBe(8);
    expect(envValue({ GATEWAY_PORT: '0' }, 'GATEWAY_PORT')).toBe(0);
    expect(envValue({ GATEWAY_RATE_LIMIT_PER_SEC: '0.5' }, 'GATEWAY_RATE_LIMIT_PER_SEC')).toBe(0.5);
    expect(envValue({ WARREN_OPS_PORT: '9464' }, 'WARREN_OPS_PORT')).toBe(9464);
    expect(envValue({ SCHEDULER: 'off' }, 'SCHEDULER')).toBe('off');
    expect(envValue({ GATEWAY_TOKENS: 'a, b' }, 'GATEWAY_TOKENS')).toEqual(['a', 'b']);
    expect(envValue({ RABBITMQ_MANAGEMENT_URL: 'http://u:p@h:15672' }, 'RABBITMQ_MANAGEMENT_URL')).toBe('http://u:p@h:15672');
  });

  it('keeps a set-but-empty value where emptiness means something', () => {
    expect(envGiven({ WARREN_REPL_HISTORY: '' }, 'WARREN_REPL_HISTORY')).toBe('');
    expect(errorOf(() => envGiven({ GATEWAY_TOKENS: '' }, 'GATEWAY_TOKENS')).message).toMatch(/^GATEWAY_TOKENS is set but holds no token/);
  });

  it('names the bad variable and the value it got', () => {
    const cases: [EnvName, string, RegExp][] = [
      ['PREFETCH', 'lots', /^PREFETCH must be a positive integer, got "lots"$/],
      ['PREFETCH', '0', /^PREFETCH must be a positive integer/],
      ['PREFETCH', '1.5', /^PREFETCH must be a positive integer/],
      ['GATEWAY_PORT', 'eighty', /^GATEWAY_PORT must be a non-negative integer, got "eighty"$/],
      ['GATEWAY_PORT', '-1', /^GATEWAY_PORT must be a non-negative integer/],
      ['WARREN_OPS_PORT', '65536', /^WARREN_OPS_PORT must be a TCP port \(1-65535\)/],
      ['GATEWAY_RATE_LIMIT_PER_SEC', '0', /^GATEWAY_RATE_LIMIT_PER_SEC must be a positive number/],
      ['GATEWAY_RATE_LIMIT_PER_SEC', 'fast', /^GATEWAY_RATE_LIMIT_PER_SEC must be a positive number/],
      ['SCHEDULER', 'maybe', /^SCHEDULER must be "on" or "off", got "maybe"$/],
      ['GATEWAY_AUTH', 'off', /^GATEWAY_AUTH must be "token" or "none"/],
      ['GATEWAY_TOKENS', 'a,', /^GATEWAY_TOKENS has an empty entry/],
      ['GATEWAY_OPERATOR_TOKENS', 'a b', /^GATEWAY_OPERATOR_TOKENS has an entry with whitespace inside/],
      ['LOG_LEVEL', 'verbose', /^LOG_LEVEL must be "fatal" or "error" or "warn" or "info" or "debug" or "trace" or "silent", got "verbose"$/],
      ['AMQP_URL', 'http://127.0.0.1:15672', /^AMQP_URL must be amqp:\/\/ or amqps:\/\/ URLs \(the URL has scheme "http:"\)$/],
      ['AMQP_URL', 'amqp://a,localhost:5672', /^AMQP_URL must be amqp:\/\/ or amqps:\/\/ URLs \(entry 2 has scheme "localhost:"\)$/],
      ['AMQP_URL', 'amqp://a, rabbit', /^AMQP_URL must be amqp:\/\/ or amqps:\/\/ URLs \(entry 2 has no scheme\)$/],
    ];
    for (const [name, value, message] of cases) {
      const err = errorOf(() => envValue({ [name]: value }, name));
      expect(err).toBeInstanceOf(RangeError);
      expect(err.code).toBe('WARREN_BAD_ENV');
      expect(err.variable).toBe(name);
      expect(err.message).toMatch(message);
    }
  });

  it('never echoes a secret (a URL with a password, a token)', () => {
    const err = errorOf(() => envValue({ RABBITMQ_MANAGEMENT_URL: 'amqp://user:s3cret@host' }, 'RABBITMQ_MANAGEMENT_URL'));
    expect(err.message).toBe('RABBITMQ_MANAGEMENT_URL must be an http(s) URL');
    expect(errorOf(() => envValue({ AMQP_URL: 'http://user:s3cret@host' }, 'AMQP_URL')).message).not.toContain('s3cret');
    expect(envValue({ AMQP_URL: 'amqps://user:pw@host:5671/vhost' }, 'AMQP_URL')).toEqual(['amqps://user:pw@host:5671/vhost']);
    expect(errorOf(() => envValue({ GATEWAY_TOKENS: 's3cret x' }, 'GATEWAY_TOKENS')).message).not.toContain('s3cret');
  });
});

describe('envSchema', () => {
  it('describes every variable: a meaning, at least one reader, names in the usual shape', () => {
    for (const [name, v] of Object.entries(envSchema)) {
      expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(v.description.length).toBeGreaterThan(5);
      expect(v.readers.length).toBeGreaterThan(0);
    }
  });

  it('parses its own defaults back to themselves (a default is a value the variable could hold)', () => {
    for (const [name, v] of Object.entries(envSchema)) {
      if (v.default === undefined) continue;
      const text = Array.isArray(v.default) ? v.default.join(',') : String(v.default);
      expect(envGiven({ [name]: text }, name as EnvName)).toEqual(v.default);
    }
  });
});
