import { connectClient, startService, type ClientOptions, type RpcClient, type ServiceOptions, type WarrenService } from '@warren/amqp';
import { MemoryBroker, type MemoryConnection } from '@warren/amqp-transport';

/**
 * Services and clients over one MemoryBroker, with jest's fake clock: time
 * (setTimeout, setInterval, Date) is faked, ticks (nextTick, setImmediate,
 * queueMicrotask) stay real, so the engine's own tick-batching works while
 * deadlines, TTLs and delays move only when a test advances the clock.
 */
export class World {
  readonly bus = new MemoryBroker();
  private readonly closers: (() => Promise<void>)[] = [];

  static fakeTime(): void {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'], now: 1_700_000_000_000 });
  }

  /** A service on a connection of its own, or on `connection` (one a test cuts with `simulateLoss`). */
  async service(options: ServiceOptions & { readonly connection?: MemoryConnection }): Promise<WarrenService> {
    const s = await startService({ announceIntervalMs: 60_000, ...options, connection: options.connection ?? this.bus.connect() });
    this.closers.push(() => s.close());
    return s;
  }

  /** A client on a connection of its own, or on `connection` (one a test cuts with `simulateLoss`). */
  async client(options: ClientOptions & { readonly connection?: MemoryConnection } = {}): Promise<RpcClient> {
    const c = await connectClient({ defaultTimeoutMs: 5000, ...options, connection: options.connection ?? this.bus.connect() });
    this.closers.push(() => c.close());
    return c;
  }

  /** Closes everything (advancing the fake clock through any grace periods), then checks the broker left no timer behind. */
  async close(): Promise<void> {
    for (const close of this.closers.reverse()) await until(close());
    await until(this.bus.close());
    expect(this.bus.pendingTimers).toBe(0);
  }
}

/** Gives each test of the file a fresh World on the fake clock (`set` is told of it), closed after the test. */
export function useWorld(set: (w: World) => void): void {
  let current: World | undefined;
  beforeEach(() => {
    World.fakeTime();
    current = new World();
    set(current);
  });
  afterEach(async () => {
    await current?.close();
    jest.useRealTimers();
  });
}

/** Advances the fake clock in `stepMs` steps until `p` settles (at most `maxMs`); returns `p`. */
export async function until<T>(p: Promise<T>, stepMs = 5, maxMs = 120_000): Promise<T> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await settleTicks();
  for (let t = 0; !done && t < maxMs; t += stepMs) await jest.advanceTimersByTimeAsync(stepMs);
  return p;
}

/** Lets promise jobs and real ticks run without moving the fake clock. */
export async function settleTicks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** A promise and its resolver, for handlers a test lets go when it wants. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

/** The error a promise rejects with (or fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
}
