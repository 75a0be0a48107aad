import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { silentLogger } from '@warren/logger';
import { runServiceMain, type MainProcess } from '../src/runtime/service-main';
import { drainedExitCode } from '../src/runtime/supervisor-watch';

/** A stand-in for `process`: signals are emitted by the test, stderr is recorded. */
function fakeProcess(): MainProcess & { emitter: EventEmitter; written: string[] } {
  const emitter = new EventEmitter();
  const written: string[] = [];
  return {
    emitter,
    written,
    on: (signal, listener) => emitter.on(signal, listener),
    off: (signal, listener) => emitter.off(signal, listener),
    stderr: { write: (text: string) => written.push(text) },
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

afterEach(() => jest.restoreAllMocks());

it('starts, closes on SIGTERM, resolves 0 and leaves no signal listener behind; never exits the process', async () => {
  const exit = jest.spyOn(process, 'exit').mockImplementation((() => {
    throw new Error('process.exit called from the library');
  }) as typeof process.exit);
  const proc = fakeProcess();
  const close = jest.fn(() => Promise.resolve());
  const code = runServiceMain({ name: 'calc', logger: silentLogger(), process: proc, start: () => Promise.resolve({ close }) });
  await tick();
  expect(proc.emitter.listenerCount('SIGTERM')).toBe(1);
  expect(proc.emitter.listenerCount('SIGINT')).toBe(1);
  proc.emitter.emit('SIGTERM', 'SIGTERM');
  await expect(code).resolves.toBe(0);
  expect(close).toHaveBeenCalledTimes(1);
  expect(proc.emitter.listenerCount('SIGTERM')).toBe(0);
  expect(exit).not.toHaveBeenCalled();
});

it('resolves 1 with one line on stderr when starting fails, and installs no handler', async () => {
  const proc = fakeProcess();
  const code = await runServiceMain({ name: 'calc', logger: silentLogger(), process: proc, start: () => Promise.reject(new Error('no broker')) });
  expect(code).toBe(1);
  expect(proc.written).toEqual(['calc failed to start: no broker\n']);
  expect(proc.emitter.listenerCount('SIGTERM')).toBe(0);
});

it('resolves 1 when closing fails, and 1 at once on a second signal more than a second after the first', async () => {
  const failing = fakeProcess();
  const failed = runServiceMain({ name: 'a', logger: silentLogger(), process: failing, start: () => Promise.resolve({ close: () => Promise.reject(new Error('x')) }) });
  await tick();
  failing.emitter.emit('SIGINT', 'SIGINT');
  await expect(failed).resolves.toBe(1);

  const stuck = fakeProcess();
  const close = jest.fn(() => new Promise<void>(() => undefined));
  const second = runServiceMain({ name: 'b', logger: silentLogger(), process: stuck, start: () => Promise.resolve({ close }) });
  await tick();
  stuck.emitter.emit('SIGTERM', 'SIGTERM');
  const firstAt = Date.now();
  jest.spyOn(Date, 'now').mockReturnValue(firstAt + 1000);
  stuck.emitter.emit('SIGTERM', 'SIGTERM');
  await expect(second).resolves.toBe(1);
  expect(close).toHaveBeenCalledTimes(1);
});

it('drains on when the same Ctrl-C comes twice (the terminal\'s, then a launcher\'s relay)', async () => {
  const proc = fakeProcess();
  let closed: () => void = () => undefined;
  const close = jest.fn(() => new Promise<void>((r) => (closed = r)));
  const code = runServiceMain({ name: 'calc', logger: silentLogger(), process: proc, start: () => Promise.resolve({ close }) });
  await tick();
  proc.emitter.emit('SIGINT', 'SIGINT');
  proc.emitter.emit('SIGINT', 'SIGINT');
  let settled = false;
  void code.then(() => (settled = true));
  await tick();
  expect(settled).toBe(false);
  closed();
  await expect(code).resolves.toBe(0);
  expect(close).toHaveBeenCalledTimes(1);
});

describe('supervisor: the pipe whose end means the process that started this one is gone (issue 28)', () => {
  it('its end closes gracefully, as SIGTERM does, and is no longer watched after', async () => {
    const { PassThrough } = await import('node:stream');
    const proc = fakeProcess();
    const lifeline = new PassThrough();
    const close = jest.fn(() => Promise.resolve());
    const code = runServiceMain({ name: 'calc', logger: silentLogger(), process: proc, supervisor: lifeline, start: () => Promise.resolve({ close }) });
    await tick();
    lifeline.write('ignored');
    await tick();
    expect(close).not.toHaveBeenCalled();
    lifeline.end();
    await expect(code).resolves.toBe(0);
    expect(close).toHaveBeenCalledTimes(1);
    expect(lifeline.listenerCount('end')).toBe(0);
  });

  it('gone during a drain a signal started: the drain goes on (bounded by its own timeout), not cut short as by a second signal', async () => {
    const { PassThrough } = await import('node:stream');
    const proc = fakeProcess();
    const lifeline = new PassThrough();
    let finish: () => void = () => undefined;
    const close = jest.fn(() => new Promise<void>((r) => (finish = r)));
    const code = runServiceMain({ name: 'calc', logger: silentLogger(), process: proc, supervisor: lifeline, start: () => Promise.resolve({ close }) });
    await tick();
    proc.emitter.emit('SIGTERM', 'SIGTERM');
    lifeline.destroy();
    await tick();
    finish();
    await expect(code).resolves.toBe(0);
    expect(close).toHaveBeenCalledTimes(1);
  });
});

it('ends with 0 once an operator drained the service (workers.drain), closing it as a signal does', async () => {
  const proc = fakeProcess();
  const close = jest.fn(() => Promise.resolve());
  let drain: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => (drain = resolve));
  const code = runServiceMain({ name: 'calc', logger: silentLogger(), process: proc, start: () => Promise.resolve({ close, drained }) });
  await tick();
  expect(close).not.toHaveBeenCalled();
  drain();
  await expect(code).resolves.toBe(0);
  expect(close).toHaveBeenCalledTimes(1);
  expect(proc.emitter.listenerCount('SIGTERM')).toBe(0);
});

it('ends with drainedExitCode once drained when a supervisor is watched, so npm start does not read it as a crash; a signal still ends with 0', async () => {
  const drainedRun = async (signalFirst: boolean): Promise<number> => {
    const proc = fakeProcess();
    let drain: () => void = () => undefined;
    const drained = new Promise<void>((resolve) => (drain = resolve));
    const code = runServiceMain({ name: 'calc', logger: silentLogger(), process: proc, supervisor: new PassThrough(), start: () => Promise.resolve({ close: () => Promise.resolve(), drained }) });
    await tick();
    if (signalFirst) proc.emitter.emit('SIGTERM', 'SIGTERM');
    drain();
    return code;
  };
  expect(drainedExitCode).not.toBe(0);
  await expect(drainedRun(false)).resolves.toBe(drainedExitCode);
  await expect(drainedRun(true)).resolves.toBe(0);
});
