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

/** The levels a logger takes (pino's), quietest last. */
const levels: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Creates the root logger of a process. Only composition roots call this; libraries take a logger.
 *
 * Besides the redacted paths, every string in a line (the message, fields, and
 * the serialized `err` with its stack, cause and extra properties such as
 * Node's `input`) has URL credentials replaced (`scheme://user:***@`), so a
 * connection URL that reaches a log by way of an error message does not carry
 * its password along.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  // pino's own refusal ("unknown level verbose") names neither the option nor what it takes.
  if (!levels.includes(level)) throw new RangeError(`CreateLoggerOptions.level must be one of ${levels.join(', ')}, got ${JSON.stringify(level)}`);
  const config: LoggerOptions = {
    name: options.name ?? 'warren',
    level,
    redact: { paths: [...redactedPaths], censor: '[redacted]' },
    serializers: { err: (err: Error) => scrubCredentials(pino.stdSerializers.err(err)) },
    formatters: { log: (object) => scrubCredentials(object) },
    hooks: {
      logMethod(args, method) {
        const scrubbed: unknown[] = args.map((a) => (typeof a === 'string' ? scrubCredentialsIn(a) : a));
        // Logged without a message of its own, an error lends pino its message, taken after these hooks: pass it scrubbed.
        const err = errorIn(scrubbed[0]);
        if (err && typeof scrubbed[1] !== 'string') scrubbed.splice(1, 0, scrubCredentialsIn(err.message));
        method.apply(this, scrubbed as Parameters<typeof method>);
      },
    },
  };
  const root = options.destination ? pino(config, options.destination) : pino(config);
  // pino gives children no bindings formatter; every child is made from its parent with Object.create,
  // so this one override scrubs the bindings of children and grandchildren alike.
  const child = root.child;
  root.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, scrubCredentials(bindings), childOptions);
  } as Logger['child'];
  return root;
}

/** The error a log call's first argument is or carries as `err`, if any. */
function errorIn(first: unknown): Error | undefined {
  if (first instanceof Error) return first;
  const err = typeof first === 'object' && first !== null ? (first as { err?: unknown }).err : undefined;
  return err instanceof Error ? err : undefined;
}

/** A URL-looking token: a scheme, "//", then everything up to whitespace (quotes included: a password may hold one). */
const urlToken = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;

/** Replaces the password of every `scheme://user:password@host` in a text with `***`. */
export function scrubCredentialsIn(text: string): string {
  if (!text.includes('://') || !text.includes('@')) return text;
  return text.replace(urlToken, hidePassword);
}

/**
 * `scheme://user:password@rest` → `scheme://user:***@rest`. The credentials run to the token's last "@", so a
 * password with an unescaped "@", "/", "?" or "#" is hidden whole (at worst, so is a path holding an "@").
 */
function hidePassword(token: string): string {
  const slashes = token.indexOf('//');
  const at = token.lastIndexOf('@');
  if (slashes < 0 || at < slashes) return token;
  const start = slashes + 2;
  const userinfo = token.slice(start, at);
  const colon = userinfo.indexOf(':');
  if (colon < 0 || userinfo.slice(colon + 1) === '***') return token;
  return `${token.slice(0, start)}${userinfo.slice(0, colon)}:***${token.slice(at)}`;
}

/** A copy of `value` with {@link scrubCredentialsIn} applied to every string (bounded depth); unchanged parts are shared. */
export function scrubCredentials<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return scrubCredentialsIn(value) as T;
  if (typeof value !== 'object' || value === null || depth > 6 || value instanceof Error || Buffer.isBuffer(value)) return value;
  let copy: Record<string, unknown> | unknown[] | undefined;
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  for (const [key, v] of entries) {
    const scrubbed = scrubCredentials(v, depth + 1);
    if (scrubbed === v) continue;
    copy ??= Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
    (copy as Record<string | number, unknown>)[key] = scrubbed;
  }
  return (copy ?? value) as T;
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
    // Rebuilt from the parse only when the parser read the credentials as such; a password with an unescaped
    // "/", "?", "#" or "@" ends up in the port, path or fragment instead, and the text is redacted as it stands.
    if (parsed.password || !url.includes('@')) {
      if (parsed.password) parsed.password = '***';
      for (const key of [...parsed.searchParams.keys()]) {
        if (/pass|secret|token|key/i.test(key)) parsed.searchParams.set(key, '***');
      }
      return hidePassword(parsed.toString());
    }
  } catch {
    // Not a URL at all: the text is all there is.
  }
  return hidePassword(url);
}
