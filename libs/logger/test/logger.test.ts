import { Writable } from 'node:stream';
import { createLogger, redactUrl } from '@warren/logger';

describe('logger', () => {
  it('redacts passwords in URLs', () => {
    expect(redactUrl('amqp://guest:secret@127.0.0.1:5672/vh')).toBe('amqp://guest:***@127.0.0.1:5672/vh');
    expect(redactUrl('rediss://:pw@redis:6380?token=abc')).not.toContain('pw');
    expect(redactUrl('rediss://:pw@redis:6380?token=abc')).not.toContain('abc');
    expect(redactUrl('not a url//user:pw@host')).not.toContain('pw');
  });

  it('never writes params, payloads or credentials', () => {
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(chunk.toString()), cb()) });
    const log = createLogger({ destination, level: 'debug' });
    log.info({ call: { params: { card: '4111' } }, payload: 'secret body', password: 'pw', headers: { authorization: 'Bearer t' } }, 'hello');
    expect(lines.join('')).not.toMatch(/4111|secret body|"pw"|Bearer t/);
    expect(lines.join('')).toContain('[redacted]');
  });

  it('refuses an unknown level at once, naming the option and the levels it takes', () => {
    expect(() => createLogger({ level: 'verbose' })).toThrow(new RangeError('CreateLoggerOptions.level must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'));
    expect(createLogger({ level: 'silent' }).level).toBe('silent');
  });
});
