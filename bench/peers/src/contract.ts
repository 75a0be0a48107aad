/**
 * What the bench hands a peer program, and what a peer's caller module gives back. The bench side
 * (bench/peer-service.ts, bench/peer-callers.ts) loads these modules with import() and holds the
 * same shapes, written again there: the root program never compiles this package.
 */

/** The JSON a peer's service or caller is started with. */
export interface PeerSpec {
  /** RabbitMQ URL. */
  readonly url: string;
  /** Unique per target (pid + random): every queue, exchange or namespace the peer declares starts with it. */
  readonly name: string;
  /** The bench's --prefetch, for the service's consumer where the framework takes one. */
  readonly prefetch: number;
  /** A caller's per-call timeout (ms). */
  readonly timeoutMs: number;
}

/** One client: `call` is one checked round trip of `add`. */
export interface PeerCaller {
  call(): Promise<void>;
  stop(): Promise<void>;
}

/** A peer's service module: starts answering `add`, gives back its shutdown. */
export type ServeFn = (spec: PeerSpec) => Promise<() => Promise<void>>;

/** A peer's caller module. */
export type OpenFn = (spec: PeerSpec) => Promise<PeerCaller>;

/** Checks an answer the way every bench caller does: a wrong sum fails the call. */
export function expectSum(result: unknown, a: number, b: number): void {
  if (result !== a + b) throw new Error(`wrong result ${JSON.stringify(result)} for ${a}+${b}`);
}

/** The `add` params a service receives: [a, b]. */
export function sum(params: unknown): number {
  if (!Array.isArray(params) || typeof params[0] !== 'number' || typeof params[1] !== 'number') throw new Error('add expects [a, b]');
  return params[0] + params[1];
}
