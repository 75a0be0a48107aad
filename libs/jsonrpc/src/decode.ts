import { ErrorCode, errorMessages } from './codes';
import { defaultDecodeLimits, resolveDecodeLimits, type DecodeLimits, type ResolvedDecodeLimits } from './limits';
import { RawNumberId } from './raw-id';
import { safeParse } from './safe-parse';
import type { Decoded, DecodedItem, ErrorObject, ErrorResponse, Id, JsonValue, Params } from './types';

/**
 * Decodes a payload (text or bytes) into requests, notifications, responses
 * or the error response to send. Never throws.
 *
 * @example
 * const d = decode('{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}');
 * // d.kind === 'single' && d.item.kind === 'request'
 */
export function decode(input: string | Uint8Array, limits?: DecodeLimits | ResolvedDecodeLimits): Decoded {
  const resolved = limits === undefined ? defaultDecodeLimits : isResolved(limits) ? limits : resolveDecodeLimits(limits);
  const parsed = safeParse(input, resolved);
  if (!parsed.ok) {
    const data = parsed.reason === 'invalid_json' ? undefined : { reason: parsed.reason };
    return { kind: 'rejected', response: errorResponse(null, ErrorCode.ParseError, data) };
  }
  return classifyPayload(parsed.value, resolved);
}

/** Classifies an already-parsed value, e.g. a body a web framework parsed safely. Never throws. */
export function classifyPayload(value: unknown, limits: ResolvedDecodeLimits = defaultDecodeLimits): Decoded {
  if (!Array.isArray(value)) return { kind: 'single', item: classifyItem(value) };
  if (value.length === 0) return { kind: 'rejected', response: errorResponse(null, ErrorCode.InvalidRequest) };
  if (value.length > limits.maxBatch) {
    return { kind: 'rejected', response: errorResponse(null, ErrorCode.InvalidRequest, { reason: 'batch_too_large', limit: limits.maxBatch }) };
  }
  return { kind: 'batch', items: value.map(classifyItem) };
}

/** Classifies one element of a message or batch. */
export function classifyItem(value: unknown): DecodedItem {
  if (!isPlainObject(value)) return invalid(null);
  const id = value['id'];
  const hasId = 'id' in value;
  const readableId: Id = hasId && isId(id) ? id : null;
  if (value['jsonrpc'] !== '2.0') return invalid(readableId);

  if ('method' in value) {
    const method = value['method'];
    const params = value['params'];
    if (typeof method !== 'string') return invalid(readableId);
    if (params !== undefined && !isParams(params)) return invalid(readableId);
    if (hasId && !isId(id)) return invalid(null);
    const base = params === undefined ? { jsonrpc: '2.0' as const, method } : { jsonrpc: '2.0' as const, method, params };
    return hasId ? { kind: 'request', message: { ...base, id: id as Id } } : { kind: 'notification', message: base };
  }

  if (hasId && isId(id)) {
    const hasResult = 'result' in value;
    const hasError = 'error' in value;
    if (hasResult && !hasError) return { kind: 'response', message: { jsonrpc: '2.0', result: value['result'] as JsonValue, id } };
    if (hasError && !hasResult && isErrorObject(value['error'])) return { kind: 'response', message: { jsonrpc: '2.0', error: value['error'], id } };
  }
  return invalid(readableId);
}

/** Builds an error response with the specification's message for a standard code. */
export function errorResponse(id: Id, code: number, data?: JsonValue, message?: string): ErrorResponse {
  const text = message ?? errorMessages[code as keyof typeof errorMessages] ?? 'Server error';
  const error: ErrorObject = data === undefined ? { code, message: text } : { code, message: text, data };
  return { jsonrpc: '2.0', error, id };
}

function invalid(id: Id): DecodedItem {
  return { kind: 'invalid', response: errorResponse(id, ErrorCode.InvalidRequest) };
}

function isResolved(limits: DecodeLimits | ResolvedDecodeLimits | undefined): limits is ResolvedDecodeLimits {
  return limits !== undefined && limits.maxBytes !== undefined && limits.maxDepth !== undefined && limits.maxBatch !== undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is Id {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || value instanceof RawNumberId;
}

function isParams(value: unknown): value is Params {
  return typeof value === 'object' && value !== null;
}

function isErrorObject(value: unknown): value is ErrorObject {
  return isPlainObject(value) && Number.isInteger(value['code']) && typeof value['message'] === 'string';
}
