// DirectoryRecorder: when a service instance writes its methods to the directory.
import { recordAnnounced } from '@warren/amqp';
import { DirectoryRecorder, type DirectoryMethod } from '../src/discovery/directory';

const methods: DirectoryMethod[] = [{ name: 'add', jobStyle: false }];
const log = { warn: jest.fn(), debug: jest.fn() };

function writer(fail = false): { record: jest.Mock<Promise<void>, [string, readonly DirectoryMethod[]]> } {
  return { record: jest.fn((_s: string, _m: readonly DirectoryMethod[]) => (fail ? Promise.reject(new Error('redis away')) : Promise.resolve())) };
}

beforeEach(() => jest.clearAllMocks());

it('records at the first announcement, not again until the refresh is due, and again after a reconnect', async () => {
  const w = writer();
  const recorder = new DirectoryRecorder(w, 'calculator', methods, log, 60_000);
  recorder.announced();
  await recorder.settled();
  recorder.announced();
  await recorder.settled();
  expect(w.record).toHaveBeenCalledTimes(1);
  expect(w.record).toHaveBeenCalledWith('calculator', methods);
  recorder.reconnected();
  recorder.announced();
  await recorder.settled();
  expect(w.record).toHaveBeenCalledTimes(2);
});

it('refreshes once the refresh period is over', async () => {
  const w = writer();
  const recorder = new DirectoryRecorder(w, 'calculator', methods, log, 1);
  recorder.announced();
  await recorder.settled();
  await new Promise((r) => setTimeout(r, 5));
  recorder.announced();
  await recorder.settled();
  expect(w.record).toHaveBeenCalledTimes(2);
});

it('runs one write at a time', async () => {
  let release!: () => void;
  const w = { record: jest.fn(() => new Promise<void>((r) => (release = r))) };
  const recorder = new DirectoryRecorder(w, 'calculator', methods, log);
  recorder.announced();
  recorder.announced();
  expect(w.record).toHaveBeenCalledTimes(1);
  release();
  await recorder.settled();
});

it('tries a failed write again at the next announcement, warning once per outage', async () => {
  const w = writer(true);
  const recorder = new DirectoryRecorder(w, 'calculator', methods, log);
  for (let i = 0; i < 3; i++) {
    recorder.announced();
    await recorder.settled();
  }
  expect(w.record).toHaveBeenCalledTimes(3);
  expect(log.warn).toHaveBeenCalledTimes(1);
  expect(log.debug).toHaveBeenCalledTimes(2);
});

describe('recordAnnounced (the broker records what it hears)', () => {
  function fakeRegistry(): { list: jest.Mock; on: jest.Mock; off: jest.Mock; fire(): void; set(v: unknown[]): void } {
    let instances: unknown[] = [];
    let listener: (() => void) | undefined;
    return {
      list: jest.fn(() => instances),
      on: jest.fn((_e: string, l: () => void) => (listener = l)),
      off: jest.fn(() => (listener = undefined)),
      fire: () => listener?.(),
      set: (v) => (instances = v),
    };
  }
  const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

  it('records each service once per method set, including one heard later, and stops listening on close', async () => {
    const registry = fakeRegistry();
    const w = writer();
    registry.set([{ service: 'py-svc', methods: [{ name: 'py.add' }, { name: 'py.job', jobStyle: true }] }, { service: 'py-svc', methods: [{ name: 'py.add' }, { name: 'py.job', jobStyle: true }] }]);
    const recording = recordAnnounced(registry, w, log);
    await flush();
    expect(w.record).toHaveBeenCalledTimes(1);
    expect(w.record).toHaveBeenCalledWith('py-svc', [{ name: 'py.add', jobStyle: false }, { name: 'py.job', jobStyle: true }]);
    registry.set([...registry.list(), { service: 'events-only', methods: [] }, { service: 'calc', methods: [{ name: 'add' }] }]);
    registry.fire();
    await flush();
    expect(w.record).toHaveBeenCalledTimes(2);
    expect(w.record).toHaveBeenLastCalledWith('calc', [{ name: 'add', jobStyle: false }]);
    recording.close();
    expect(registry.off).toHaveBeenCalledWith('change', expect.any(Function));
  });

  it('forgets a method set no instance announces any more (written again if it comes back), and keeps the one still announced', async () => {
    const registry = fakeRegistry();
    const w = writer();
    const calc = { service: 'calc', methods: [{ name: 'add' }] };
    const old = { service: 'calc', methods: [{ name: 'add' }, { name: 'sub' }] };
    registry.set([calc, old]);
    const recording = recordAnnounced(registry, w, log);
    await flush();
    expect(w.record).toHaveBeenCalledTimes(2);
    registry.set([calc]);
    registry.fire();
    await flush();
    expect(w.record).toHaveBeenCalledTimes(2); // calc is still known and not due
    registry.set([calc, old]);
    registry.fire();
    await flush();
    expect(w.record).toHaveBeenCalledTimes(3);
    expect(w.record).toHaveBeenLastCalledWith('calc', [{ name: 'add', jobStyle: false }, { name: 'sub', jobStyle: false }]);
    recording.close();
  });
});
