import { PassThrough } from 'node:stream';
import { InvalidParamsError, RpcNoConsumersError, RpcTimeoutError } from '@warren/jsonrpc';
import { ExitCode, UsageError, parseId, parseParams, parseWord, percentile, resolveSettings, run, showError, type Io } from '../src/index';
import { colors, duration, prettyJson, table, wantColor } from '../src/format';
import { delayFlags, parseAt, parseDuration } from '../src/when';

function fakeIo(env: Record<string, string> = {}, tty = false): Io & { output: () => string; errors: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (t: string) => (out += t), isTTY: tty },
    stderr: { write: (t: string) => (err += t), isTTY: tty },
    stdin: new PassThrough(),
    env,
    output: () => out,
    errors: () => err,
  };
}

describe('params from the command line', () => {
  it.each<[string[], unknown]>([
    [[], undefined],
    [['4', '5'], [4, 5]],
    [['hello', '5'], ['hello', 5]],
    [['{"minuend":42,"subtrahend":23}'], { minuend: 42, subtrahend: 23 }],
    [['[1,2,4]'], [1, 2, 4]],
    [['[[1,2]]'], [[1, 2]]],
    [['7'], [7]],
    [['"7"'], ['7']],
    [['true', 'null'], [true, null]],
    [['{not json'], ['{not json']],
    [['-5', '3'], [-5, 3]],
  ])('%j → %j', (words, params) => {
    expect(parseParams(words)).toEqual(params);
  });

  it('parses words as JSON, falling back to the string', () => {
    expect(parseWord('1e3')).toBe(1000);
    expect(parseWord('User logged in')).toBe('User logged in');
  });

  it('takes a numeric --id as a number', () => {
    expect(parseId('7')).toBe(7);
    expect(parseId('abc')).toBe('abc');
    expect(parseId('1.5')).toBe('1.5');
  });
});

describe('settings', () => {
  it('takes flags over the environment over the defaults', () => {
    const io = fakeIo({ WARREN_NAMESPACE: 'envns', AMQP_URL: 'amqp://a:1,amqp://b:2', REDIS_URL: 'redis://r:1' });
    expect(resolveSettings(io, {})).toMatchObject({ namespace: 'envns', amqpUrls: ['amqp://a:1', 'amqp://b:2'], redisUrl: 'redis://r:1', keyPrefix: 'envns', gateway: 'http://127.0.0.1:18001', gatewayExplicit: false });
    expect(resolveSettings(io, { namespace: 'flag', gateway: 'off', keyPrefix: 'kp' })).toMatchObject({ namespace: 'flag', keyPrefix: 'kp', gateway: undefined, gatewayExplicit: true });
    expect(resolveSettings(fakeIo(), {})).toMatchObject({ namespace: 'warren', amqpUrls: ['amqp://guest:guest@127.0.0.1:5672'], keyPrefix: 'warren' });
  });

  it('refuses an AMQP URL that is not amqp:// or amqps:// at once with a usage error naming AMQP_URL or --amqp-url', async () => {
    const env = fakeIo({ AMQP_URL: 'http://guest:s3cret@127.0.0.1:15672', WARREN_GATEWAY: 'off' });
    await expect(run(['call', 'add', '1', '2'], env)).resolves.toBe(ExitCode.usage);
    expect(env.errors()).toBe('error CLI_USAGE: AMQP_URL must be amqp:// or amqps:// URLs (the URL has scheme "http:")\n');
    const flag = fakeIo({ WARREN_GATEWAY: 'off' });
    await expect(run(['--amqp-url', 'amqp://a,http://b', 'call', 'add'], flag)).resolves.toBe(ExitCode.usage);
    expect(flag.errors()).toBe('error CLI_USAGE: --amqp-url must be amqp:// or amqps:// URLs (entry 2 has scheme "http:")\n');
  });

  it('uses colours only on a terminal, never with --json, and honours NO_COLOR / FORCE_COLOR', () => {
    expect(resolveSettings(fakeIo({}, true), {}).color).toBe(true);
    expect(resolveSettings(fakeIo({}, false), {}).color).toBe(false);
    expect(resolveSettings(fakeIo({}, true), { json: true }).color).toBe(false);
    expect(resolveSettings(fakeIo({}, true), { color: false }).color).toBe(false);
    expect(wantColor(true, { NO_COLOR: '1' })).toBe(false);
    expect(wantColor(false, { FORCE_COLOR: '1' })).toBe(true);
  });
});

describe('formatting', () => {
  it('aligns tables, right-aligning number columns, ignoring colour codes', () => {
    const c = colors(true);
    const text = table(['name', 'n'], [[c.red('a'), '1'], ['bbb', '100']], colors(false), new Set([1]));
    expect(text.split('\n')).toEqual(['name    n', `${c.red('a')}       1`, 'bbb   100']);
  });

  it('colours JSON only when asked', () => {
    expect(prettyJson({ a: 1 }, colors(false))).toBe('{\n  "a": 1\n}');
    expect(prettyJson({ a: 1 }, colors(true))).toContain('\u001b[');
  });

  it('formats durations', () => {
    expect(duration(90)).toBe('90ms');
    expect(duration(1234)).toBe('1.2s');
    expect(duration(125_000)).toBe('2m05s');
  });

  it('computes nearest-rank percentiles', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 0.5)).toBe(50);
    expect(percentile(xs, 0.99)).toBe(99);
    expect(percentile(xs, 1)).toBe(100);
    expect(percentile([], 0.5)).toBeNaN();
  });
});

describe('showing errors', () => {
  it("shows a client's local failure by its wire code, message and data (exit 1), with its local code", () => {
    expect(showError(new RpcTimeoutError())).toEqual({ code: -32001, message: 'Deadline exceeded', local: 'RPC_TIMEOUT', exitCode: ExitCode.error });
    expect(showError(new RpcNoConsumersError('calculator', 'add', 0))).toEqual({
      code: -32002, message: 'Service unavailable: no instance of calculator is running', data: { reason: 'no_consumers', service: 'calculator', method: 'add', queued: 0 }, local: 'RPC_NO_CONSUMERS', exitCode: ExitCode.error,
    });
  });

  it("shows a service's answer as it is, and the CLI's own errors by their string code", () => {
    expect(showError(new InvalidParamsError('bad', [{ path: '/0' }]))).toEqual({ code: -32602, message: 'bad', data: [{ path: '/0' }], exitCode: ExitCode.error });
    expect(showError(new UsageError('no such command'))).toEqual({ code: 'CLI_USAGE', message: 'no such command', exitCode: ExitCode.usage });
  });
});

describe('run (no broker needed)', () => {
  it('prints help for the program and for every command, exiting 0', async () => {
    for (const argv of [['--help'], ['call', '--help'], ['notify', '--help'], ['batch', '--help'], ['services', '--help'], ['inflight', '--help'], ['status', '--help'], ['cancel', '--help'], ['bench', '--help']]) {
      const io = fakeIo();
      await expect(run(argv, io)).resolves.toBe(ExitCode.ok);
      expect(io.output()).toMatch(/^Usage: warren/);
    }
  });

  it('exits 2 on usage errors, with a message on stderr', async () => {
    for (const argv of [['nope'], ['call'], ['bench', '--calls', 'x'], ['call', 'add', '--timeout', '-1'], ['inflight', '--interval', '0']]) {
      const io = fakeIo();
      await expect(run(argv, io)).resolves.toBe(ExitCode.usage);
      expect(io.errors()).toMatch(/error/);
    }
  });

  it('exits 3 with a clear message when RabbitMQ cannot be reached', async () => {
    const io = fakeIo({ AMQP_URL: 'amqp://guest:secret@127.0.0.1:1' });
    await expect(run(['--connect-timeout', '300', 'call', 'add', '1', '2'], io)).resolves.toBe(ExitCode.unreachable);
    expect(io.errors()).toMatch(/^error CLI_UNREACHABLE: cannot reach RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1/);
    expect(io.errors()).not.toContain('secret');
  });

  it('reports a batch file that cannot be read as a usage error', async () => {
    const io = fakeIo({ AMQP_URL: 'amqp://127.0.0.1:1' });
    await expect(run(['batch', '/nonexistent/batch.json'], io)).resolves.toBe(ExitCode.usage);
    expect(io.errors()).toMatch(/cannot read/);
  });

  it('prints errors as a JSON-RPC error object on stdout with --json', async () => {
    const io = fakeIo({ AMQP_URL: 'amqp://127.0.0.1:1' });
    await expect(run(['--json', '--connect-timeout', '200', 'notify', 'x'], io)).resolves.toBe(ExitCode.unreachable);
    expect(JSON.parse(io.output())).toMatchObject({ jsonrpc: '2.0', error: { code: 'CLI_UNREACHABLE' }, id: null });
  });
});

describe('--at and --in', () => {
  it('reads durations as people write them, or milliseconds', () => {
    expect(parseDuration('1500')).toBe(1500);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('30d')).toBe(30 * 86_400_000);
    for (const bad of ['', 'soon', '10 m', '5x', '-5s', '1h30', '50d']) expect(() => parseDuration(bad)).toThrow(UsageError);
  });

  it('reads ISO 8601 times, with a zone or in local time, refusing anything else and past 49.7 days', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseAt('2030-01-01T02:00:00Z', now)).toBe(Date.parse('2030-01-01T02:00:00Z'));
    expect(parseAt('2030-01-01 03:00+01:00', now)).toBe(Date.parse('2030-01-01T02:00:00Z'));
    expect(parseAt('2030-01-01T02:00', now)).toBe(new Date(2030, 0, 1, 2, 0).getTime());
    for (const bad of ['tomorrow', '02:00', '2030-01-01', '2030-13-01T00:00Z']) expect(() => parseAt(bad, now)).toThrow(UsageError);
    expect(() => parseAt('2030-03-01T00:00:00Z', now)).toThrow(/49.7 days/);
  });

  it('gives the client one delay option, refusing both flags at once', () => {
    expect(delayFlags({})).toEqual({});
    expect(delayFlags({ in: '10m' })).toEqual({ delayMs: 600_000 });
    expect(delayFlags({ at: '2030-01-01T02:00:00Z' }, Date.parse('2030-01-01T00:00:00Z'))).toEqual({ notBefore: Date.parse('2030-01-01T02:00:00Z') });
    expect(() => delayFlags({ in: '1s', at: '2030-01-01T02:00:00Z' })).toThrow(/not both/);
  });
});
