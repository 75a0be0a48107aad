import pino, { type Logger as PinoLogger, type LoggerOptions } from 'pino';

/** The logger every Warren library accepts: pino's, so child loggers and `err` serialization work as usual. */
export type Logger = PinoLogger;

export interface CreateLoggerOptions {
  /** Component name, shown as `name` on every line. @default 'warren' */
  readonly name?: string;
  /** pino level. @default 'info' */
  readonly level?: string;
  /** Where lines go; tests pass a stream to read them back. @default stdout */
  readonly destination?: pino.DestinationStream;
}

/**
 * Paths whose values are secrets or untrusted payloads: replaced in every
 * line. Payloads live under `payload`/`params` so they can be dropped
 * wholesale; credentials under their usual names.
 */
export const redactedPaths: readonly string[] = [
  'password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'headers.authorization',
  'req.headers.authorization', 'req.headers.cookie', 'params', '*.params', 'payload', '*.payload',
];

/** Creates the root logger of a process. Only composition roots call this; libraries take a logger. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const config: LoggerOptions = {
    name: options.name ?? 'warren',
    level: options.level ?? 'info',
    redact: { paths: [...redactedPaths], censor: '[redacted]' },
    serializers: { err: pino.stdSerializers.err },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** A logger that writes nothing: the default for libraries used without one. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/**
 * Strips the password (and any token-like query values) from a connection URL
 * before it is logged or shown: `amqp://user:secret@host` → `amqp://user:***@host`.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()]) {
      if (/pass|secret|token|key/i.test(key)) parsed.searchParams.set(key, '***');
    }
    return parsed.toString();
  } catch {
    // Not a URL we can parse: hide anything between "//" and "@", where credentials would be.
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}
