// Secrets in connection URLs never reach a log line: redactUrl on every
// shape of URL a person might configure (passwords with characters URL
// parsers misread included), and the logger's own scrubbing of URL
// credentials in messages, fields and serialized errors.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { createLogger, redactUrl, scrubCredentialsIn } from '@warren/logger';

const numRuns = 500;

function capture(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  return { lines, destination: new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(chunk.toString()), cb()) }) };
}

describe('redactUrl', () => {
  it.each([
    ['amqp://guest:s3cret@127.0.0.1:5672/vh', 'amqp://guest:***@127.0.0.1:5672/vh'],
    ['amqps://user:s3cret@rabbit.example:5671', 'amqps://user:***@rabbit.example:5671'],
    ['rediss://:s3cret@redis:6380/0', 'rediss://:***@redis:6380/0'],
    ['redis://default:s3cret@redis:6379', 'redis://default:***@redis:6379'],
    ['amqp://u:1234/s3cret@host', 'amqp://u:***@host'],
    ['amqp://u:p@s3cret@host:5672', 'amqp://u:***@host:5672'],
    ['amqp://u:pa?s3cret@host', 'amqp://u:***@host'],
    ['amqp://u:pa#s3cret@host', 'amqp://u:***@host'],
    ['amqp://u:p%40s3cret@host', 'amqp://u:***@host'],
    ['amqp://host:5672', 'amqp://host:5672'],
    ['amqp://user@host', 'amqp://user@host'],
  ])('%s → %s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted);
  });

  it('hides token-like query values', () => {
    expect(redactUrl('rediss://:pw@redis:6380?token=abc&db=1')).toBe('rediss://:***@redis:6380?token=***&db=1');
  });

  it(`never shows any part of a password that has 4 or more characters (${numRuns} runs)`, () => {
    const secret = fc.string({ unit: 'grapheme-ascii', minLength: 4, maxLength: 30 }).filter((s) => !/\s/.test(s) && !/^\*+$/.test(s));
    fc.assert(
      fc.property(fc.constantFrom('amqp', 'amqps', 'redis', 'rediss'), fc.stringMatching(/^[a-z]{0,8}$/), secret, fc.constantFrom('', ':5672', ':6379/0', '/vhost'), (scheme, user, password, rest) => {
        // A password that is also part of the URL's visible parts (the user, say) shows there legitimately.
        fc.pre(![scheme, user, 'host.example', rest].some((part) => part.includes(password)));
        const url = `${scheme}://${user}:${password}@host.example${rest}`;
        const shown = redactUrl(url);
        // The whole secret never appears; nor does the part after its first "/", "?" or "#" (what parsers misread).
        expect(shown.includes(password)).toBe(false);
        expect(scrubCredentialsIn(`failed to reach ${url} (ECONNREFUSED)`).includes(password)).toBe(false);
      }),
      { numRuns },
    );
  });
});

describe('the logger', () => {
  const secret = 'Zq9-s3cret-Zq9';

  it('scrubs URL credentials from messages, fields and errors (message, stack, cause, extra properties)', () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination, level: 'debug' });
    const url = `amqp://guest:${secret}@127.0.0.1:5672`;
    log.info(`connecting to ${url}`);
    log.warn({ target: { url, list: [url] } }, 'field');
    const err = Object.assign(new Error(`connect failed for ${url}`, { cause: new Error(`inner ${url}`) }), { input: url, code: 'ERR_INVALID_URL' });
    log.error({ err }, 'error');
    log.info({ nested: { a: { b: { c: `redis://:${secret}@redis:6379` } } } }, 'deep');
    expect(lines).toHaveLength(4);
    expect(lines.join('\n')).not.toContain(secret);
    expect(lines.join('\n')).toContain('guest:***@127.0.0.1');
    expect(JSON.parse(lines[2] as string)).toMatchObject({ err: { code: 'ERR_INVALID_URL', input: 'amqp://guest:***@127.0.0.1:5672' } });
  });

  it('scrubs the message an error lends a line logged without one, and child bindings', () => {
    const { lines, destination } = capture();
    const url = `amqp://guest:${secret}@127.0.0.1:5672`;
    const log = createLogger({ destination, level: 'info' }).child({ target: url });
    log.error(new Error(`connect failed for ${url}`));
    log.warn({ err: new Error(`lost ${url}`) });
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toContain(secret);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'connect failed for amqp://guest:***@127.0.0.1:5672', target: 'amqp://guest:***@127.0.0.1:5672' });
    expect(JSON.parse(lines[1] as string)).toMatchObject({ msg: 'lost amqp://guest:***@127.0.0.1:5672' });
  });

  it('leaves lines without credentials as they are', () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination, level: 'info' });
    log.info({ a: 1, url: 'http://127.0.0.1:18001/rpc', email: 'x@y.z' }, 'plain');
    expect(JSON.parse(lines[0] as string)).toMatchObject({ a: 1, url: 'http://127.0.0.1:18001/rpc', email: 'x@y.z', msg: 'plain' });
  });
});
