import { silentLogger } from '@warren/logger';
import { shutdownHandler } from '../src/runtime/shutdown';

afterEach(() => {
  jest.restoreAllMocks();
  jest.useRealTimers();
});

/** The handler must never exit the process itself: only the outermost main does. */
function forbidExit(): jest.SpyInstance {
  return jest.spyOn(process, 'exit').mockImplementation((() => {
    throw new Error('process.exit called from the library');
  }) as typeof process.exit);
}

it('closes once on the first signal and resolves exit code 0 when closed', async () => {
  const exit = forbidExit();
  const close = jest.fn(() => Promise.resolve());
  const stop = shutdownHandler({ log: silentLogger(), close });
  stop('SIGTERM');
  await expect(stop.exitCode).resolves.toBe(0);
  expect(close).toHaveBeenCalledTimes(1);
  expect(exit).not.toHaveBeenCalled();
});

it('resolves 1 when closing fails', async () => {
  const stop = shutdownHandler({ log: silentLogger(), close: () => Promise.reject(new Error('broken')) });
  stop('SIGINT');
  await expect(stop.exitCode).resolves.toBe(1);
});

it('resolves 1 at once on a second signal after repeatWindowMs, without closing again', async () => {
  jest.useFakeTimers();
  const exit = forbidExit();
  const close = jest.fn(() => new Promise<void>(() => undefined));
  const stop = shutdownHandler({ log: silentLogger(), close });
  stop('SIGTERM');
  await jest.advanceTimersByTimeAsync(1000);
  stop('SIGTERM');
  await expect(stop.exitCode).resolves.toBe(1);
  expect(close).toHaveBeenCalledTimes(1);
  expect(exit).not.toHaveBeenCalled();
});

// One Ctrl-C reaches every process of the terminal's foreground group, and a launcher there (tsx, npm)
// may relay it to its child again: the same stop, delivered twice, must drain, not exit at once.
it('takes a signal within repeatWindowMs of the first as the same stop: it drains on', async () => {
  jest.useFakeTimers();
  let closed: () => void = () => undefined;
  const close = jest.fn(() => new Promise<void>((r) => (closed = r)));
  const stop = shutdownHandler({ log: silentLogger(), close, repeatWindowMs: 500 });
  const seen: number[] = [];
  void stop.exitCode.then((code) => seen.push(code));
  stop('SIGINT');
  await jest.advanceTimersByTimeAsync(10);
  stop('SIGINT');
  await jest.advanceTimersByTimeAsync(480);
  stop('SIGTERM');
  await jest.advanceTimersByTimeAsync(1);
  expect(seen).toEqual([]);
  closed();
  await expect(stop.exitCode).resolves.toBe(0);
  expect(close).toHaveBeenCalledTimes(1);
});

it('resolves 1 when closing takes longer than timeoutMs, and a later close changes nothing', async () => {
  jest.useFakeTimers();
  let closed: () => void = () => undefined;
  const stop = shutdownHandler({ log: silentLogger(), close: () => new Promise<void>((r) => (closed = r)), timeoutMs: 1000 });
  const seen: number[] = [];
  void stop.exitCode.then((code) => seen.push(code));
  stop('SIGTERM');
  await jest.advanceTimersByTimeAsync(999);
  expect(seen).toEqual([]);
  await jest.advanceTimersByTimeAsync(1);
  expect(seen).toEqual([1]);
  closed();
  await jest.advanceTimersByTimeAsync(1);
  await expect(stop.exitCode).resolves.toBe(1);
});

it('stays pending until a signal comes', async () => {
  jest.useFakeTimers();
  const stop = shutdownHandler({ log: silentLogger(), close: () => Promise.resolve() });
  const seen: number[] = [];
  void stop.exitCode.then((code) => seen.push(code));
  await jest.advanceTimersByTimeAsync(60_000);
  expect(seen).toEqual([]);
});
