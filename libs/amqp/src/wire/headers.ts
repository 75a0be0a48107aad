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
  /** Set on error replies Warren produced itself (not from a handler). */
  origin: 'x-warren-origin',
  /** The attempt a retried request is on (2 for its first retry); see retry.ts. */
  attempt: 'x-warren-attempt',
  /** RabbitMQ quorum queues count deliveries here. */
  deliveryCount: 'x-delivery-count',
  /** RabbitMQ's dead-letter history; any publisher can forge it (see WarrenService's dead-lettering). */
  death: 'x-death',
} as const;

/** The protocol version this implementation speaks, sent as `x-warren-protocol`. */
export const protocolVersion = 1;

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
