import { AmqpConnection } from '../src/connection';

describe('urls of a connection (connectClient, startService, AmqpConnection)', () => {
  it('refuses a URL that is not amqp:// or amqps:// at once, naming the option and the scheme, never the password', () => {
    expect(() => new AmqpConnection({ urls: 'http://guest:s3cret@127.0.0.1:15672' })).toThrow(new TypeError('urls[0] must be an amqp:// or amqps:// URL (it has scheme "http:")'));
    expect(() => new AmqpConnection({ urls: ['amqp://127.0.0.1', 'rabbit:5672'] })).toThrow(/^urls\[1\] must be an amqp:\/\/ or amqps:\/\/ URL \(it has scheme "rabbit:"\)$/);
    expect(() => new AmqpConnection({ urls: ['amqp://127.0.0.1', 'no url'] })).toThrow(/^urls\[1\] must be an amqp:\/\/ or amqps:\/\/ URL \(it has no scheme\)$/);
  });

  it('takes amqp:// and amqps:// URLs, even ones only amqplib reads (a password with an unescaped "#")', () => {
    expect(new AmqpConnection({ urls: ['amqp://guest:guest@127.0.0.1:5672', 'AMQPS://u:p@host:5671/vhost', 'amqp://u:p#x@host'] }).state).toEqual({ type: 'idle' });
  });
});
