/**
 * Every Redis key @warren/eventlog writes, built in this one place from a
 * prefix. Nothing else in the package spells a key.
 *
 *   <prefix>:eventlog:<stream>   list: newest entry first, capped, TTL refreshed on every append
 *   <prefix>:record:<name>       string (JSON): one small record, TTL set on every write
 */
export interface EventLogKeys {
  readonly prefix: string;
  stream(name: string): string;
  record(name: string): string;
}

const prefixPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
/** Stream and record names come from service names and call ids: the same safe alphabet, a little longer. */
const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;

export function assertName(kind: string, value: string): void {
  if (!namePattern.test(value)) throw new RangeError(`${kind} must match ${namePattern.source}, got ${JSON.stringify(value)}`);
}

export function eventLogKeys(prefix: string): EventLogKeys {
  if (!prefixPattern.test(prefix)) throw new RangeError(`EventLogOptions.keyPrefix must match ${prefixPattern.source}, got ${JSON.stringify(prefix)}`);
  return {
    prefix,
    stream: (name) => {
      assertName('stream name', name);
      return `${prefix}:eventlog:${name}`;
    },
    record: (name) => {
      assertName('record name', name);
      return `${prefix}:record:${name}`;
    },
  };
}
