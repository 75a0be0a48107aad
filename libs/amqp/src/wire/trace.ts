import { randomFillSync } from 'node:crypto';

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
  const traceId = parent?.traceId ?? randomHex(16);
  return `00-${traceId}-${randomHex(8)}-${parent?.flags ?? '01'}`;
}

/** The W3C limit on a `tracestate` header (https://www.w3.org/TR/trace-context/#tracestate-limits). */
export const maxTracestateLength = 512;
/** Printable ASCII without `"` and `\`, plus the separators: what a list of `key=value` members can hold. */
const tracestateChars = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A `tracestate` value fit to carry on, or undefined: empty, longer than 512 characters, or holding
 * characters no member may hold. Vendors' members are opaque; Warren passes them on unchanged.
 */
export function validTracestate(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= maxTracestateLength && tracestateChars.test(trimmed) ? trimmed : undefined;
}

// Ids are drawn from a pool refilled in bulk: one crypto call per 256 spans
// instead of two per call on the hot path.
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}
