/** AMQP header names Warren reads and writes; see docs/protocol.md. */
export const Header = {
  /** The Warren protocol version a request or notification was written to (docs/protocol.md); 1. */
  protocol: 'x-warren-protocol',
  /** Absolute deadline, milliseconds since the Unix epoch, as a number. */
  deadline: 'x-warren-deadline',
  /** When the caller first published the request, ms since the epoch (the worker's queue-wait metric). */
  sentAt: 'x-warren-sent',
  /** W3C trace context. */
  traceparent: 'traceparent',
  /** W3C trace context: vendors' trace state, carried along with `traceparent` (absent when there is none). */
  tracestate: 'tracestate',
  /** Set on error replies Warren produced itself (not from a handler). */
  origin: 'x-warren-origin',
  /** The attempt a retried request is on (2 for its first retry); see retry.ts. */
  attempt: 'x-warren-attempt',
  /** RabbitMQ quorum queues count deliveries here. */
  deliveryCount: 'x-delivery-count',
  /** RabbitMQ's dead-letter history; any publisher can forge it (see WarrenService's dead-lettering). */
  death: 'x-death',
} as const;

/** The protocol's major version, sent as `x-warren-protocol` (an AMQP integer, as v1 peers expect). */
export const protocolVersion = 1;

/**
 * The minor version (v1.2), sent as `x-warren-protocol-minor`: a v1 peer ignores a header it does
 * not know, so 1.x is signalled without changing what v1 readers compare (docs/protocol.md, "Versions").
 */
export const protocolMinor = 2;
export const protocolMinorHeader = 'x-warren-protocol-minor';

/**
 * An integer header value written as a 64-bit signed AMQP integer (field type `l`), whatever its
 * size: amqplib otherwise picks the smallest width (`b` for 1, `s` for -32700), which readers
 * expecting one width (Go's amqp091 reads no `u`/`i`) miss. Readers take any width
 * (docs/protocol.md, "Headers"). amqplib encodes `{ '!': 'long', value }` as `l`.
 */
export interface LongHeader {
  readonly '!': 'long';
  readonly value: number;
}

/** `n` (an integer) as a 64-bit header value; see {@link LongHeader}. */
export function int64(n: number): LongHeader {
  return { '!': 'long', value: n };
}

/** A header value Warren writes again as it was read, but every integer as `l` (a republished copy is Warren writing). */
export function asWritten(value: unknown): unknown {
  return typeof value === 'number' && Number.isInteger(value) ? int64(value) : value;
}

/** The protocol headers every request and notification carries, as `l` (one shared object each: nothing allocated per publish). */
export const protocolHeaderValue: LongHeader = int64(protocolVersion);
export const protocolMinorHeaderValue: LongHeader = int64(protocolMinor);

/**
 * The latest deadline read (ms since the epoch): 8.64e15, the last moment a JavaScript `Date` holds
 * (year 275760). A later one (up to int64's 2^63 - 1) reads as this: the call has, in effect, no
 * deadline, and every TTL derived from it (the in-flight store's, in Redis) stays valid
 * (docs/protocol.md, "Deadlines").
 */
export const maxDeadlineMs = 8_640_000_000_000_000;

/** A decimal string of digits only: "1e3", "0x10", "-5", " 7", "1.5" are not deadlines. */
const digitsOnly = /^[0-9]{1,16}$/;

/**
 * Reads `x-warren-deadline` (ms since the epoch) as docs/protocol.md, "Deadlines", says: any AMQP
 * integer (`b B s u I i l`, decoded as numbers), a float (`f d`), a decimal (`D`: digits / 10^places),
 * or a string of digits only. A timestamp (`T`) is ignored: AMQP timestamps are seconds, and a
 * reader that took it as milliseconds would read 1970. So is every other type, and NaN or infinity.
 * undefined: ignored. A deadline past {@link maxDeadlineMs} reads as it.
 */
export function deadlineHeader(headers: Record<string, unknown> | undefined): number | undefined {
  const value = headers?.[Header.deadline];
  if (typeof value === 'number') return Number.isFinite(value) ? Math.min(value, maxDeadlineMs) : undefined;
  if (typeof value === 'bigint') return Math.min(Number(value), maxDeadlineMs);
  if (typeof value === 'string') return digitsOnly.test(value) ? Math.min(Number(value), maxDeadlineMs) : undefined;
  if (value && typeof value === 'object' && (value as { '!'?: unknown })['!'] === 'decimal') {
    const d = (value as { value?: { places?: unknown; digits?: unknown } }).value;
    return typeof d?.places === 'number' && typeof d.digits === 'number' ? d.digits / 10 ** d.places : undefined;
  }
  return undefined;
}

/** Reads a numeric header; AMQP tables may carry numbers as strings or typed values depending on the publisher. */
export function numberHeader(headers: Record<string, unknown> | undefined, name: string): number | undefined {
  const value = headers?.[name];
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  if (typeof value === 'bigint') return Number(value);
  if (value && typeof value === 'object' && 'value' in value) return numberHeader({ v: (value as { value: unknown }).value }, 'v');
  return undefined;
}

export function stringHeader(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = headers?.[name];
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}
