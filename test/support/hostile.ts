// Shared by the hostile-input tests (gateway and consumer fuzz, security,
// end-to-end hostile values): a raw HTTP/1.1 client that sends exactly the bytes it is
// given, a JSON-RPC oracle written from the specification (not from
// @warren/jsonrpc), response shape checks, an in-memory log sink, and a
// watcher for unhandled rejections on the real process.
import { connect } from 'node:net';
import fc from 'fast-check';
import { Writable } from 'node:stream';
import vm from 'node:vm';
import { createLogger, type Logger } from '@warren/logger';

export interface RawResponse {
  readonly status: number;
  /** Lower-cased header names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/**
 * Sends `request` as is over a fresh TCP connection and reads until the
 * server closes it (requests carry `Connection: close`). `status` is 0 when
 * the server closed without answering. Rejects only on a client-side timeout.
 */
export function rawHttp(port: number, request: Buffer | string, opts: { localAddress?: string; timeoutMs?: number; halfClose?: boolean } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ...(opts.localAddress === undefined ? {} : { localAddress: opts.localAddress }) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${opts.timeoutMs ?? 10_000} ms to ${JSON.stringify(request.toString().slice(0, 300))}`));
    }, opts.timeoutMs ?? 10_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    // A reset after the answer (the server closing on unread bytes) is still an answer.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks)));
    });
    socket.write(request);
    // For requests that may never be complete: the server sees the end of input instead of waiting for more.
    if (opts.halfClose) socket.end();
  });
}

function parseResponse(data: Buffer): RawResponse {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: data };
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i < 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = data.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status, headers, body };
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** An HTTP/1.1 request with a correct Content-Length and `Connection: close`; header values are written as latin1 bytes. */
export function httpRequest(method: string, target: string, headers: readonly (readonly [string, string])[], body: Buffer | string = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (method !== 'GET' || bytes.length > 0) lines.push(`Content-Length: ${bytes.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]);
}

// ---------------------------------------------------------------------------
// The oracle: what a JSON-RPC 2.0 server must answer, from the specification.

export type Id = string | number | null;

/** What one item of a payload must produce. */
export type ItemExpectation =
  | { readonly kind: 'nothing' }
  /** A response object sent to a server: JSON-RPC servers answer -32600 with its id; MCP takes it as a client's answer. */
  | { readonly kind: 'response'; readonly id: Id }
  | { readonly kind: 'error'; readonly code: number; readonly id: Id }
  | { readonly kind: 'call'; readonly method: string; readonly params: unknown; readonly id: Id };

/** What a whole payload must produce. */
export type PayloadExpectation =
  | { readonly kind: 'single'; readonly item: ItemExpectation }
  | { readonly kind: 'batch'; readonly items: readonly ItemExpectation[] };

export const ParseErrorCode = -32700;
export const InvalidRequestCode = -32600;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Classifies raw bytes the way the specification (and docs/errors.md for the
 * limits: 64 levels, 1000 batch items) says a server must: -32700 for what is
 * not UTF-8 JSON or too deep, -32600 for what is not a request, a batch per
 * item, nothing for notifications.
 */
export function expectFor(bytes: Uint8Array, limits = { maxBytes: 1024 * 1024, maxDepth: 64, maxBatch: 1000 }): PayloadExpectation {
  if (bytes.byteLength > limits.maxBytes) return { kind: 'single', item: { kind: 'error', code: ParseErrorCode, id: null } };
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    return { kind: 'single', item: { kind: 'error', code: ParseErrorCode, id: null } };
  }
  if (depth(value) > limits.maxDepth) return { kind: 'single', item: { kind: 'error', code: ParseErrorCode, id: null } };
  if (Array.isArray(value)) {
    if (value.length === 0 || value.length > limits.maxBatch) return { kind: 'single', item: { kind: 'error', code: InvalidRequestCode, id: null } };
    return { kind: 'batch', items: value.map(expectItem) };
  }
  return { kind: 'single', item: expectItem(value) };
}

function depth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const v of Object.values(value)) deepest = Math.max(deepest, depth(v));
  return deepest + 1;
}

function isId(v: unknown): v is Id {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

function own(o: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

export function expectItem(item: unknown): ItemExpectation {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return { kind: 'error', code: InvalidRequestCode, id: null };
  const o = item as Record<string, unknown>;
  const hasId = own(o, 'id');
  const id: Id = hasId && isId(o['id']) ? o['id'] : null;
  const valid = o['jsonrpc'] === '2.0'
    && own(o, 'method') && typeof o['method'] === 'string'
    && (!own(o, 'params') || (typeof o['params'] === 'object' && o['params'] !== null))
    && (!hasId || isId(o['id']));
  if (!valid) {
    const hasResult = own(o, 'result');
    const hasError = own(o, 'error');
    const e = o['error'] as Record<string, unknown> | null | undefined;
    const errorObject = typeof e === 'object' && e !== null && !Array.isArray(e) && Number.isInteger(e['code']) && typeof e['message'] === 'string';
    const response = o['jsonrpc'] === '2.0' && !own(o, 'method') && hasId && isId(o['id']) && (hasResult ? !hasError : hasError && errorObject);
    return response ? { kind: 'response', id } : { kind: 'error', code: InvalidRequestCode, id };
  }
  if (!hasId) return { kind: 'nothing' };
  return { kind: 'call', method: o['method'] as string, params: o['params'], id };
}

/** A method name RabbitMQ can carry as a routing key (docs/protocol.md): 1-255 bytes, no control characters. */
export function routable(method: string): boolean {
  // eslint-disable-next-line no-control-regex
  return method.length > 0 && Buffer.byteLength(method) <= 255 && !/[\u0000-\u001f\u007f]/.test(method);
}

/** Method names that probe paths, AMQP patterns and reserved names, prototypes, lengths at the 255-byte limit and control characters. */
export function trickyMethodNames(namespace: string): string[] {
  return [
    '', ' ', '.', '..', '../', '../../etc/passwd', '/', '#', '*', '*.*', 'amq.*', 'amq.direct', 'amq.rabbitmq.reply-to', 'add\u0000', 'a\nb', '\u007f',
    'add ', ' add', 'ADD', 'x'.repeat(255), 'x'.repeat(256), 'é'.repeat(127), 'é'.repeat(128), '__proto__', 'constructor', 'toString', 'hasOwnProperty',
    `${namespace}.svc.examples`, `${namespace}.rpc`, 'rpc.', 'rpc.other', 'ping', 'tools/call',
  ];
}

const absent = Symbol('absent');
const maybe = <T>(arb: fc.Arbitrary<T>, presentOutOf10: number): fc.Arbitrary<T | typeof absent> =>
  fc.oneof({ weight: presentOutOf10, arbitrary: arb }, { weight: 10 - presentOutOf10, arbitrary: fc.constant(absent) });

/** Ids of every kind: valid ones (strings, integers, fractions, -0, beyond 2^53) and invalid ones (booleans, objects, arrays). */
export const idValues: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(), fc.string({ maxLength: 12 }), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 2 ** 53 + 1, 1e308, 1.5, 'a-1'), fc.boolean(), fc.constant({}), fc.constant([1]),
);

/** Params: mostly two integers (what `add` takes), else any JSON, objects, and wrong shapes. */
export const paramsValues: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.integer({ min: -1e6, max: 1e6 }), fc.integer({ min: -1e6, max: 1e6 })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.record({ expression: fc.string({ maxLength: 20 }) }) },
  { weight: 1, arbitrary: fc.constantFrom(null, [], {}, '1,2', [1, 2, 3], { minuend: 5, subtrahend: 2 }) },
);

/** Objects near a valid request: every field may be missing or wrong, and a response's fields may appear. */
export function nearRequests(methodNames: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({
    jsonrpc: maybe(fc.oneof({ weight: 8, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.constantFrom('1.0', 2, '2', null, '2.0 ') }), 9),
    method: maybe(fc.oneof({ weight: 8, arbitrary: methodNames }, { weight: 1, arbitrary: fc.constantFrom(1, null, ['add'], { a: 1 }) }), 9),
    params: maybe(paramsValues, 8),
    id: maybe(idValues, 8),
    result: maybe(fc.jsonValue({ maxDepth: 2 }), 1),
    error: maybe(fc.oneof(fc.record({ code: fc.integer(), message: fc.string({ maxLength: 10 }) }), fc.jsonValue({ maxDepth: 2 })), 1),
  }).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== absent)));
}

function truncated(text: string, at: number): string {
  return text.slice(0, text.length === 0 ? 0 : at % text.length);
}

/**
 * Payloads as bytes: near-valid requests and batches of them, random bytes,
 * random UTF-16 text, any JSON, truncated JSON, deep nesting around the
 * 64-level limit, and a few classic edge cases.
 */
export function payloads(methodNames: fc.Arbitrary<string>): fc.Arbitrary<Buffer> {
  const item = nearRequests(methodNames);
  return fc.oneof(
    { weight: 6, arbitrary: item.map((o) => Buffer.from(JSON.stringify(o))) },
    { weight: 3, arbitrary: fc.array(item, { maxLength: 6 }).map((a) => Buffer.from(JSON.stringify(a))) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 100 }).map((t) => Buffer.from(t)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v))) },
    { weight: 1, arbitrary: fc.tuple(item, fc.nat()).map(([o, n]) => Buffer.from(truncated(JSON.stringify(o), n))) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map((n) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`)) },
    { weight: 1, arbitrary: fc.integer({ min: 60, max: 70 }).map((n) => Buffer.from(`{"jsonrpc":"2.0","method":"sum","params":${'['.repeat(n)}${']'.repeat(n)},"id":1}`)) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', '[]', '[[]]', '{}', '"x"', '1e309', '\uFEFF{}', '[{}]', '{"__proto__":{"polluted":1}}').map((t) => Buffer.from(t)) },
  );
}

// ---------------------------------------------------------------------------
// Response shapes.

export interface WireResponse {
  readonly jsonrpc: '2.0';
  readonly id: Id;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** Throws unless `value` is one JSON-RPC 2.0 response object: jsonrpc, id, and exactly one of result / error{integer code, string message}. */
export function assertResponse(value: unknown): asserts value is WireResponse {
  const problem = responseProblem(value);
  if (problem) throw new Error(`not a JSON-RPC response (${problem}): ${JSON.stringify(value)?.slice(0, 500)}`);
}

function responseProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const r = value as Record<string, unknown>;
  if (r['jsonrpc'] !== '2.0') return 'jsonrpc';
  if (!own(r, 'id') || !isId(r['id'])) return 'id';
  const hasResult = own(r, 'result');
  const hasError = own(r, 'error');
  if (hasResult === hasError) return 'result xor error';
  if (hasError) {
    const e = r['error'] as Record<string, unknown> | null;
    if (typeof e !== 'object' || e === null || !Number.isInteger(e['code']) || typeof e['message'] !== 'string') return 'error object';
  }
  const extra = Object.keys(r).filter((k) => !['jsonrpc', 'id', 'result', 'error'].includes(k));
  return extra.length > 0 ? `extra keys ${extra.join(',')}` : undefined;
}

/**
 * Does `r` answer item `e`? `call` decides for requests that reached a
 * method (the test knows its methods); the rest follows from the specification.
 */
export function answers(r: WireResponse, e: ItemExpectation, call: (r: WireResponse, e: Extract<ItemExpectation, { kind: 'call' }>) => boolean): boolean {
  switch (e.kind) {
    case 'nothing':
      return false;
    case 'response':
      return sameId(r.id, e.id) && r.error?.code === InvalidRequestCode;
    case 'error':
      return sameId(r.id, e.id) && r.error?.code === e.code;
    case 'call':
      return sameId(r.id, e.id) && call(r, e);
  }
}

/** Matches responses to expectations one to one (a batch answers in any order). */
export function matchAll(responses: readonly WireResponse[], expected: readonly ItemExpectation[], call: Parameters<typeof answers>[2]): boolean {
  if (responses.length !== expected.length) return false;
  const used = new Array<boolean>(expected.length).fill(false);
  const place = (i: number): boolean => {
    if (i === responses.length) return true;
    const r = responses[i] as WireResponse;
    for (let j = 0; j < expected.length; j++) {
      if (used[j] || !answers(r, expected[j] as ItemExpectation, call)) continue;
      used[j] = true;
      if (place(i + 1)) return true;
      used[j] = false;
    }
    return false;
  };
  return place(0);
}

/** What a JSON value looks like after a safe parse: `__proto__` keys and `constructor.prototype` removed (secure-json-parse's "remove"). */
export function withoutPoison(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPoison);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '__proto__') continue;
    if (k === 'constructor' && typeof v === 'object' && v !== null && Object.prototype.hasOwnProperty.call(v, 'prototype')) continue;
    Object.defineProperty(out, k, { value: withoutPoison(v), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The same id after a JSON round trip (-0 becomes 0). */
export function sameId(a: Id, b: Id): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---------------------------------------------------------------------------
// Process and logs.

/**
 * Records unhandled promise rejections on the real process. Jest runs a test
 * file in a vm context whose `process` is a copy, so listeners added to it
 * never fire; the real one is reached through vm.runInThisContext. (Jest
 * also fails the running test on an unhandled rejection; this makes the
 * check explicit and counts them.)
 */
export function watchUnhandledRejections(): { readonly seen: unknown[]; stop(): void } {
  const real = vm.runInThisContext('process') as NodeJS.Process;
  const seen: unknown[] = [];
  const listener = (reason: unknown): void => {
    seen.push(reason);
  };
  real.on('unhandledRejection', listener);
  return { seen, stop: () => real.off('unhandledRejection', listener) };
}

/** A logger (pino via @warren/logger, so with its redaction) whose lines are kept in memory. */
export function memoryLogger(level = 'debug'): { readonly logger: Logger; readonly lines: string[]; entries(): Record<string, unknown>[] } {
  const lines: string[] = [];
  let partial = '';
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      partial += chunk.toString('utf8');
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts.filter((l) => l.length > 0));
      cb();
    },
  });
  const logger = createLogger({ name: 'fuzz', level, destination });
  return { logger, lines, entries: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}
