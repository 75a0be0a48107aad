/**
 * The caller kind of the peer targets: the caller process imports the peer's compiled ESM module
 * (bench/peers/dist/<peer>-caller.js) and drives the client it opens, in the same closed loop as
 * every other target. The shapes are bench/peers/src/contract.ts's, written again: the root program
 * does not compile that package, whose dependencies are installed on demand.
 */
import type { PeerName } from './peer-paths';
import { peerModuleUrl } from './peer-paths';

export interface PeerCallerSpec {
  readonly kind: 'peer';
  readonly peer: PeerName;
  readonly url: string;
  /** Unique per target: the peer's queue or namespace. */
  readonly name: string;
  readonly prefetch: number;
  readonly timeoutMs: number;
}

interface PeerCallerModule {
  open(spec: { url: string; name: string; prefetch: number; timeoutMs: number }): Promise<{ call: () => Promise<void>; stop: () => Promise<void> }>;
}

export async function openPeerCaller(spec: PeerCallerSpec): Promise<{ call: () => Promise<void>; stop: () => Promise<void> }> {
  const mod = (await import(peerModuleUrl(spec.peer, 'caller'))) as PeerCallerModule;
  return mod.open(spec);
}
