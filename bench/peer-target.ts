/**
 * The peer targets (moleculer, nestjs-rmq, rabbitmq-client): the peer's service in a child process
 * (peer-service.ts) and its client in a caller process (peer-callers.ts), each peer under names of
 * its own (pid + random), which its programs delete on stop. See bench/peers/ and docs/benchmarks.md.
 */
import { amqpUrl } from '@warren/testkit';
import { sessionOf, spawnServer, uniqueName } from './amqp-baseline';
import type { BenchSession, BenchTarget } from './harness';
import { ensurePeers } from './peer-install';
import { PEERS, type PeerName } from './peer-paths';

const isPeer = (target: string): target is PeerName => (PEERS as readonly string[]).includes(target);

/**
 * Makes the peer targets among `targets` runnable (installing and compiling them), and gives back the
 * targets to run. When the peers were not asked for by name (the default list) and cannot be installed
 * (no registry, say), the run goes on without them, saying so; asked for by name, the failure stops it.
 */
export function preparePeers(targets: readonly string[], named: boolean, ensure: () => void = ensurePeers): string[] {
  if (!targets.some(isPeer)) return [...targets];
  try {
    ensure();
    return [...targets];
  } catch (err) {
    if (named) throw err;
    console.error(`# the peer frameworks could not be installed or built (${err instanceof Error ? err.message : String(err)}): running without ${targets.filter(isPeer).join(', ')}`);
    return targets.filter((t) => !isPeer(t));
  }
}

async function startPeer(peer: PeerName, timeoutMs: number): Promise<BenchSession> {
  const spec = { url: amqpUrl(), name: uniqueName(`bench.${peer}`), prefetch: Number(process.env['BENCH_PREFETCH'] ?? 64), timeoutMs };
  const server = await spawnServer('peer-service', [peer, JSON.stringify(spec)]);
  return sessionOf(server, { kind: 'peer', peer, ...spec });
}

export function peerTarget(peer: PeerName, timeoutMs = 10_000): BenchTarget {
  return { name: peer, start: () => startPeer(peer, timeoutMs) };
}
