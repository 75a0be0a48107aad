// drained(): what SSE writers await after write() returned false. Many writers waiting on one slow
// reader share one wait (one set of listeners on the response), and all go on when it drains or closes.
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { drained } from '../src/mcp/output-cap';

/** Just what drained() reads of a response: whether it needs a drain, whether it is gone, and its events. */
function slowResponse(): EventEmitter & { writableNeedDrain: boolean; destroyed: boolean } {
  return Object.assign(new EventEmitter(), { writableNeedDrain: true, destroyed: false });
}

it('lets many writers wait on one response with one set of listeners, and frees them all on drain', async () => {
  const res = slowResponse();
  const waits = Array.from({ length: 25 }, () => drained(res as unknown as ServerResponse));
  expect(res.listenerCount('drain')).toBe(1);
  expect(res.listenerCount('close')).toBe(1);
  res.writableNeedDrain = false;
  res.emit('drain');
  await Promise.all(waits);
  expect(res.listenerCount('drain') + res.listenerCount('close') + res.listenerCount('error')).toBe(0);
  // Full again later: a new wait, which a close ends too.
  res.writableNeedDrain = true;
  const again = drained(res as unknown as ServerResponse);
  res.emit('close');
  await again;
  expect(res.listenerCount('close')).toBe(0);
});

it('does not wait when the response can take more or is gone', async () => {
  const res = slowResponse();
  res.writableNeedDrain = false;
  await drained(res as unknown as ServerResponse);
  res.writableNeedDrain = true;
  res.destroyed = true;
  await drained(res as unknown as ServerResponse);
  expect(res.listenerCount('drain')).toBe(0);
});
