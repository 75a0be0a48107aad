import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ErrorCode, JsonRpcError, LocalErrorCode, RpcAbortedError, RpcBufferFullError, RpcConnectionLostError, RpcInvalidMethodError,
  RpcNoConsumersError, RpcNoRouteError, RpcNotConfirmedError, RpcPendingLimitError, RpcReplyQueueLostError, RpcShuttingDownError,
  RpcTimeoutError, RpcTooLargeError, RpcUnreadableReplyError, DeadlineExceededError, InternalError, isLocalError, isWireError,
  decode, toJsonRpcError, toWireError, wireErrorOf, type LocalError, type WireError,
} from '../src';

const cause = new Error('socket closed');

// Every local error, with the wire error object docs/errors.md promises for it.
const cases: [LocalError, { code: number; message: string; data?: unknown }][] = [
  [new RpcTimeoutError(), { code: -32001, message: 'Deadline exceeded' }],
  [new RpcTimeoutError(true), { code: -32001, message: 'Deadline exceeded', data: { reason: 'no_time_left' } }],
  [new RpcAbortedError(), { code: -32003, message: 'Cancelled' }],
  [new RpcAbortedError('user left'), { code: -32003, message: 'Cancelled', data: { reason: 'user left' } }],
  [new RpcConnectionLostError('unconfirmed_at_disconnect', { cause }), { code: -32007, message: 'Connection lost', data: { reason: 'unconfirmed_at_disconnect' } }],
  [new RpcReplyQueueLostError(), { code: -32007, message: 'Connection lost', data: { reason: 'reply_queue_lost' } }],
  [new RpcPendingLimitError(10), { code: -32004, message: 'Overloaded', data: { reason: 'too_many_pending_calls', limit: 10 } }],
  [new RpcBufferFullError(5), { code: -32004, message: 'Overloaded', data: { reason: 'offline_buffer_full', limit: 5 } }],
  [new RpcShuttingDownError(), { code: -32008, message: 'Shutting down' }],
  [new RpcNotConfirmedError('not_confirmed_in_time'), { code: -32002, message: 'Service unavailable', data: { reason: 'not_confirmed_in_time' } }],
  [new RpcNoRouteError('nope.x'), { code: -32601, message: 'Method not found: "nope.x" is served by nobody', data: { reason: 'no_route', method: 'nope.x' } }],
  [
    new RpcNoRouteError('ad', { namespace: 'shop', suggestions: ['add', 'and'] }),
    { code: -32601, message: 'Method not found: "ad" is served by nobody in namespace "shop"; did you mean "add" or "and"?', data: { reason: 'no_route', method: 'ad', namespace: 'shop', suggestions: ['add', 'and'] } },
  ],
  [new RpcNoConsumersError('calc', 'calc.add', 3), { code: -32002, message: 'Service unavailable: no instance of calc is running', data: { reason: 'no_consumers', service: 'calc', method: 'calc.add', queued: 3 } }],
  [new RpcTooLargeError(1024), { code: -32600, message: 'Request too large', data: { reason: 'too_large', limit: 1024 } }],
  [new RpcInvalidMethodError(), { code: -32600, message: 'Invalid Request', data: { reason: 'invalid_method_name' } }],
  [new RpcUnreadableReplyError('too_deep'), { code: -32603, message: 'Internal error', data: { reason: 'unreadable_reply', detail: 'too_deep' } }],
];

it('covers every local code', () => {
  expect(new Set(cases.map(([e]) => e.code))).toEqual(new Set(Object.values(LocalErrorCode)));
});

it.each(cases)('%s maps to its documented wire error, with the local error as cause', (local, wire) => {
  const mapped = toWireError(local);
  expect(mapped.toErrorObject()).toEqual(wire);
  expect(mapped.cause).toBe(local);
  expect(toJsonRpcError(local).toErrorObject()).toEqual(wire);
});

it('wireErrorOf gives a wire error as it is, a local one mapped, and nothing for anything else', () => {
  const remote = new DeadlineExceededError(undefined, { reason: 'deadline_passed' });
  expect(wireErrorOf(remote)).toBe(remote);
  expect(wireErrorOf(new RpcPendingLimitError(4))?.toErrorObject()).toEqual({ code: -32004, message: 'Overloaded', data: { reason: 'too_many_pending_calls', limit: 4 } });
  expect(wireErrorOf(new TypeError('bug'))).toBeUndefined();
  expect(wireErrorOf('thrown text')).toBeUndefined();
});

it('local errors are not wire errors, and keep their own cause', () => {
  const local = new RpcConnectionLostError('connection_lost', { cause });
  expect(local).not.toBeInstanceOf(JsonRpcError);
  expect(isLocalError(local)).toBe(true);
  expect(isLocalError(new DeadlineExceededError())).toBe(false);
  expect(local.cause).toBe(cause);
});

it('retryable is true exactly where the wire error is retryable (the call certainly did not run)', () => {
  for (const [local] of cases) expect({ code: local.code, retryable: local.retryable }).toEqual({ code: local.code, retryable: toWireError(local).retryable });
});

it('switch (err.code) narrows both families', () => {
  const describeLocal = (err: LocalError): string => {
    switch (err.code) {
      case 'RPC_PENDING_LIMIT':
        return `limit ${err.limit}`; // `limit` exists only on RpcPendingLimitError
      case 'RPC_CONNECTION_LOST':
        return err.reason;
      default:
        return err.code;
    }
  };
  const describeWire = (err: WireError): string => {
    switch (err.code) {
      case ErrorCode.DeadlineExceeded: {
        const narrowed: DeadlineExceededError = err;
        return narrowed.name;
      }
      default:
        return String(err.code);
    }
  };
  expect(describeLocal(new RpcPendingLimitError(3))).toBe('limit 3');
  expect(describeLocal(new RpcConnectionLostError('not_connected'))).toBe('not_connected');
  expect(describeWire(new DeadlineExceededError())).toBe('DeadlineExceededError');
  expect(describeWire(new InternalError())).toBe('-32603');
});

it('wire errors from the wire come back as their typed class; an unknown code stays a plain JsonRpcError', () => {
  const known = JsonRpcError.fromErrorObject({ code: -32001, message: 'Deadline exceeded' });
  expect(known).toBeInstanceOf(DeadlineExceededError);
  expect(isWireError(known)).toBe(true);
  const other = JsonRpcError.fromErrorObject({ code: -32099, message: 'custom' });
  expect(isWireError(other)).toBe(false);
  expect(other.code).toBe(-32099);
});

it('docs/errors.md lists every wire code and every local code', () => {
  const doc = readFileSync(join(__dirname, '../../../docs/errors.md'), 'utf8');
  for (const code of Object.values(ErrorCode)) expect(doc).toContain(`| ${code} |`);
  for (const code of Object.values(LocalErrorCode)) expect(doc).toContain(`| \`${code}\` |`);
});

it('docs/errors.md lists the -32700 reasons the decoder sends, and none it never sends', () => {
  const doc = readFileSync(join(__dirname, '../../../docs/errors.md'), 'utf8');
  const row = doc.split('\n').find((l) => l.startsWith('| -32700 | `'));
  const listed = [...(row?.split('|')[2] ?? '').matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]).sort();
  const sent = new Set<string>();
  for (const body of [new Uint8Array([0xc3, 0x28]), Buffer.from('not json'), Buffer.from(`${'['.repeat(65)}${']'.repeat(65)}`), Buffer.from(`"${'x'.repeat(1024 * 1024)}"`)]) {
    const decoded = decode(body);
    const data = decoded.kind === 'rejected' ? decoded.response.error.data : undefined;
    if (typeof data === 'object' && data !== null && 'reason' in data) sent.add(String((data as { reason: unknown }).reason));
  }
  expect(listed).toEqual([...sent].sort());
});
