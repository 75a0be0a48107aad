import type { WireHeaders, WireProperties, WirePublishOptions } from '../contract';

/** A message as a queue holds it: its own copy of content and properties, never shared with the publisher. */
export interface StoredMessage {
  readonly content: Buffer;
  readonly properties: WireProperties;
  readonly exchange: string;
  readonly routingKey: string;
  /** Already delivered once (requeued by a nack or a closed channel). */
  redelivered: boolean;
  /** Times it was handed back to the queue; quorum queues show it as `x-delivery-count`. */
  returns: number;
  /** ms since the epoch after which it expires (x-message-ttl or per-message expiration), if it does. */
  expiresAt: number | undefined;
}

/** Maps publish options to the properties a consumer sees, as amqplib and RabbitMQ do (persistent is delivery mode 2). */
export function propertiesOf(options: WirePublishOptions | undefined): WireProperties {
  const o = options ?? {};
  const deliveryMode = o.persistent === true ? 2 : o.persistent === false ? 1 : typeof o.deliveryMode === 'boolean' ? (o.deliveryMode ? 2 : 1) : o.deliveryMode;
  return {
    contentType: o.contentType,
    contentEncoding: o.contentEncoding,
    headers: o.headers === undefined ? undefined : cloneTable(o.headers),
    deliveryMode,
    priority: o.priority,
    correlationId: o.correlationId,
    replyTo: o.replyTo,
    expiration: o.expiration === undefined ? undefined : String(o.expiration),
    messageId: o.messageId,
    timestamp: o.timestamp,
    type: o.type,
    userId: o.userId,
    appId: o.appId,
    clusterId: undefined,
  };
}

/** A fresh copy of properties, headers included, for one queue or one delivery. */
export function copyProperties(p: WireProperties, headers: WireHeaders | undefined = p.headers): WireProperties {
  return { ...p, headers: headers === undefined ? undefined : cloneTable(headers) };
}

/** Deep copy of an AMQP field table: what the wire would do (undefined values are not sent). */
export function cloneTable(table: WireHeaders): WireHeaders {
  const out: WireHeaders = {};
  for (const [k, v] of Object.entries(table)) if (v !== undefined) out[k] = cloneValue(v);
  return out;
}

/** amqplib's type names whose values a consumer reads back as plain JS numbers. */
const numberTypes: ReadonlySet<string> = new Set(['byte', 'short', 'int', 'long', 'float', 'double']);

function cloneValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Buffer.isBuffer(v)) return Buffer.from(v);
  if (v instanceof Date) return new Date(v.getTime());
  if (Array.isArray(v)) return v.map(cloneValue);
  // amqplib's typed numbers (`{ '!': 'long', value }`) reach a RabbitMQ consumer as plain numbers: so here.
  const typed = (v as { '!'?: unknown })['!'];
  if (typeof typed === 'string' && numberTypes.has(typed)) return (v as { value?: unknown }).value;
  return cloneTable(v as WireHeaders);
}

/** The TTL of a publish in ms, or undefined; a malformed expiration is refused like RabbitMQ refuses it. */
export function expirationMs(expiration: string | undefined): number | undefined {
  if (expiration === undefined) return undefined;
  const ms = Number(expiration);
  return /^\d+$/.test(expiration) && Number.isSafeInteger(ms) ? ms : Number.NaN;
}
