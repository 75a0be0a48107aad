import { silentLogger } from '@warren/logger';
import { shutdownHandler } from '../src/runtime/shutdown';

/** Records exit codes instead of exiting. */
function trapExit(): number[] {
  const codes: number[] = [];
  jest.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    codes.push(code ?? 0);
    return undefined as never;
  }) as typeof process.exit);
  return codes;
}

afterEach(() => {
  jest.restoreAllMocks();
  jest.useRealTimers();
});

it('closes once on the first signal and exits 0 when closed', async () => {
  const codes = trapExit();
  const close = jest.fn(() => Promise.resolve());
  const stop = shutdownHandler({ log: silentLogger(), close });
  stop('SIGTERM');
  await new Promise((r) => setImmediate(r));
  expect(close).toHaveBeenCalledTimes(1);
  expect(codes).toEqual([0]);
});

it('exits 1 when closing fails', async () => {
  const codes = trapExit();
  const stop = shutdownHandler({ log: silentLogger(), close: () => Promise.reject(new Error('broken')) });
  stop('SIGINT');
  await new Promise((r) => setImmediate(r));
  expect(codes).toEqual([1]);
});

it('exits 1 at once on a second signal, without closing again', () => {
  const codes = trapExit();
  const close = jest.fn(() => new Promise<void>(() => undefined));
  const stop = shutdownHandler({ log: silentLogger(), close });
  stop('SIGTERM');
  stop('SIGTERM');
  expect(close).toHaveBeenCalledTimes(1);
  expect(codes).toEqual([1]);
});

it('exits 1 when closing takes longer than timeoutMs', () => {
  jest.useFakeTimers();
  const codes = trapExit();
  const stop = shutdownHandler({ log: silentLogger(), close: () => new Promise<void>(() => undefined), timeoutMs: 1000 });
  stop('SIGTERM');
  jest.advanceTimersByTime(999);
  expect(codes).toEqual([]);
  jest.advanceTimersByTime(1);
  expect(codes).toEqual([1]);
});
