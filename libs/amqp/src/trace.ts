import { randomBytes } from 'node:crypto';

/** W3C trace context (https://www.w3.org/TR/trace-context/): version-traceid-parentid-flags. */
const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface TraceContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly flags: string;
}

export function parseTraceparent(value: string | undefined): TraceContext | undefined {
  const m = value === undefined ? null : traceparentPattern.exec(value);
  if (!m || /^0+$/.test(m[1] ?? '') || /^0+$/.test(m[2] ?? '')) return undefined;
  return { traceId: m[1] as string, spanId: m[2] as string, flags: m[3] as string };
}

/** A new span: under `parent` when there is one, else the root of a new trace. */
export function childTraceparent(parent?: TraceContext): string {
  const traceId = parent?.traceId ?? randomBytes(16).toString('hex');
  return `00-${traceId}-${randomBytes(8).toString('hex')}-${parent?.flags ?? '01'}`;
}
