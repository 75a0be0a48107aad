// Every Redis key under one prefix, for `warren namespace rm`: the in-flight store's (`<prefix>:rec:…`,
// `<prefix>:{<prefix>:workers}`…, keys.ts), the schedules' (`{<prefix>:sched}:…`, @warren/schedules) and
// the event logs' (`<prefix>:eventlog:…`, @warren/eventlog). Found with SCAN (never KEYS, which blocks
// Redis), deleted with UNLINK in batches.
import type { Redis } from 'ioredis';
import { parseEntry } from './directory';
import { keys as storeKeys } from './keys';
import { openRedis } from './redis-connection';

/** A key prefix as the stores accept it; anything else could match another prefix's keys in a glob. */
const prefixPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
const batch = 500;

/**
 * The keys under `prefix` in the Redis at `url`, listed and deleted. A prefix that holds `:` also covers
 * the longer prefixes that begin with it and a colon (`team` covers `team:x`): the stores cannot tell
 * them apart either.
 *
 * @example
 * const keys = new PrefixKeys('redis://127.0.0.1:6379', 'trial');
 * await keys.delete(await keys.list()); await keys.close();
 */
export class PrefixKeys {
  private readonly client: Redis;

  constructor(url: string, private readonly prefix: string, commandTimeoutMs = 2000) {
    if (!prefixPattern.test(prefix)) throw new RangeError(`keyPrefix must match ${prefixPattern.source}, got ${JSON.stringify(prefix)}`);
    // A URL always opens a single node (or Sentinel) client; SCAN there sees every key.
    this.client = openRedis(url, commandTimeoutMs).client as Redis;
  }

  /** Every key whose name begins with `<prefix>:` or `{<prefix>:` (a hash-tagged key), sorted. */
  async list(): Promise<string[]> {
    const found = new Set<string>();
    for (const pattern of [`${this.prefix}:*`, `{${this.prefix}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await this.client.scan(cursor, 'MATCH', pattern, 'COUNT', batch);
        for (const key of keys) found.add(key);
        cursor = next;
      } while (cursor !== '0');
    }
    return [...found].sort();
  }

  /** The services the method directory (`<prefix>:method:<method>`, directory.ts) names among `keys`: those that ran with a directory, even if none runs now. */
  async directoryServices(keys: readonly string[]): Promise<string[]> {
    const methodKey = storeKeys(this.prefix).method('');
    const entries = keys.filter((k) => k.startsWith(methodKey));
    const services = new Set<string>();
    for (let i = 0; i < entries.length; i += batch) {
      for (const text of await this.client.mget(...entries.slice(i, i + batch))) {
        const entry = parseEntry(text ?? undefined);
        if (entry) services.add(entry.service);
      }
    }
    return [...services].sort();
  }

  /** Deletes `keys`; resolves how many existed. */
  async delete(keys: readonly string[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < keys.length; i += batch) deleted += await this.client.unlink(...keys.slice(i, i + batch));
    return deleted;
  }

  close(): Promise<void> {
    return this.client.quit().then(() => undefined, () => this.client.disconnect());
  }
}
