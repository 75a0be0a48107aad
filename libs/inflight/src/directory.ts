import { silentLogger, type Logger } from '@warren/logger';
import { InflightClosedError, InflightUnavailableError } from './errors';
import { directoryTtlMs, keys } from './keys';
import { DEFAULT_REDIS_URL, viewDefaults, type StoreOptions } from './options';
import { RedisStore } from './redis-store';
import { checkPositiveInts } from '@warren/config';

/** What a service records of one method (the shape of @warren/amqp's DirectoryMethod). */
export interface RecordedMethod {
  readonly name: string;
  readonly jobStyle: boolean;
}

/** What the directory says of one method (the shape of @warren/amqp's DirectoryEntry). */
export interface MethodEntry {
  readonly service: string;
  readonly jobStyle: boolean;
}

export interface DirectoryOptions extends StoreOptions {
  /** How long an entry lives unless its service records it again. @default 7 days */
  readonly ttlMs?: number;
}

/** The version of an entry's JSON (docs/protocol.md, "Method directory"). */
const entryVersion = 1;
const servicePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/**
 * The method directory in Redis: `<prefix>:method:<method>` holds which
 * service serves it, as JSON `{"v":1,"service","jobStyle","at"}`, for a week
 * past its last write. Services write it (@warren/amqp's `directory` option);
 * callers read it to learn which queue to check when no instance is alive to
 * announce (the `warren` CLI). It implements @warren/amqp's DirectoryWriter
 * and DirectoryReader ports.
 *
 * @example
 * const directory = new RedisDirectory({ redis: 'redis://127.0.0.1:6379', keyPrefix: 'warren' });
 * await startService({ urls, name: 'calculator', methods, directory });
 * await directory.lookup('add'); // { service: 'calculator', jobStyle: false }
 */
export class RedisDirectory {
  private readonly store: RedisStore;
  private readonly ttlMs: number;
  private readonly commandTimeoutMs: number;
  private closed = false;

  constructor(options: DirectoryOptions = {}) {
    const log: Logger = (options.logger ?? silentLogger()).child({ component: 'method-directory' });
    this.ttlMs = options.ttlMs ?? directoryTtlMs;
    this.commandTimeoutMs = options.commandTimeoutMs ?? viewDefaults.commandTimeoutMs;
    checkPositiveInts('DirectoryOptions', { ttlMs: this.ttlMs, commandTimeoutMs: this.commandTimeoutMs }, ['ttlMs', 'commandTimeoutMs']);
    this.store = new RedisStore(options.redis ?? DEFAULT_REDIS_URL, this.commandTimeoutMs, keys(options.keyPrefix ?? viewDefaults.keyPrefix), log);
  }

  /** Records that `service` serves `methods` (later records win). Rejects with InflightUnavailableError when Redis does not answer. */
  async record(service: string, methods: readonly RecordedMethod[]): Promise<void> {
    const at = Date.now();
    await this.op(() => this.store.setAll(methods.map((m) => [this.store.keys.method(m.name), JSON.stringify({ v: entryVersion, service, jobStyle: m.jobStyle, at })] as const), this.ttlMs));
  }

  /** Which service serves `method`; undefined when none recorded it (or its entry does not parse). Rejects with InflightUnavailableError when Redis does not answer. */
  async lookup(method: string): Promise<MethodEntry | undefined> {
    return parseEntry(await this.op(() => this.store.text(this.store.keys.method(method))));
  }

  /** Closes the Redis connection (if it is ours). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.store.close();
  }

  private async op<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new InflightClosedError();
    if (this.store.client.status !== 'ready' && !(await this.store.ready(this.commandTimeoutMs))) throw new InflightUnavailableError();
    try {
      return await work();
    } catch (err) {
      throw new InflightUnavailableError(err);
    }
  }
}

/** An entry another writer (any language) may have made: anything that does not fit is no entry. */
export function parseEntry(text: string | undefined): MethodEntry | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { service, jobStyle } = value as { service?: unknown; jobStyle?: unknown };
  if (typeof service !== 'string' || !servicePattern.test(service)) return undefined;
  return { service, jobStyle: jobStyle === true };
}
