// AMQP field values as the console and `dlq.show` show them: JSON, with dates as ISO text.
// amqplib decodes an AMQP timestamp inside a header table (RabbitMQ's `x-death` `time`, or any
// header a publisher sent as one) as `{ '!': 'timestamp', value: <seconds> }`, not as a Date.

/** Seconds since the epoch of an AMQP timestamp as amqplib (a tagged value) or a Date or number gives it; undefined otherwise. */
export function amqpTimeSeconds(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime() / 1000;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (isTaggedTimestamp(value)) return Number(value.value);
  return undefined;
}

/** AMQP field values as JSON (x-death holds dates and nested tables; a header may be binary). Bounded in depth. */
export function amqpJson(value: unknown, depth = 0): unknown {
  if (depth > 8) return '…';
  if (value instanceof Date) return value.toISOString();
  if (isTaggedTimestamp(value)) return isoOfSeconds(Number(value.value));
  if (Buffer.isBuffer(value)) return value.subarray(0, 1024).toString('utf8');
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => amqpJson(v, depth + 1));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).slice(0, 100).map(([k, v]) => [k, amqpJson(v, depth + 1)]));
  return value;
}

function isTaggedTimestamp(value: unknown): value is { readonly '!': 'timestamp'; readonly value: number | bigint } {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v['!'] === 'timestamp' && (typeof v['value'] === 'number' || typeof v['value'] === 'bigint');
}

/** ISO text of a time in seconds; one outside what a Date holds stays a number rather than throwing. */
function isoOfSeconds(seconds: number): string | number {
  const d = new Date(seconds * 1000);
  return Number.isFinite(d.getTime()) ? d.toISOString() : seconds;
}
