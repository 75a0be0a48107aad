/**
 * A peer's service process (child program of the bench):
 *
 *   node bench/dist/peer-service.js <peer> '<spec as JSON>'
 *
 * Imports the peer's compiled module (bench/peers/dist/<peer>-service.js), starts it, then speaks
 * the bench's service protocol (serve-child.ts: `ready`, `cpu` lines, shutdown on SIGTERM).
 */
import { PEERS, peerModuleUrl, type PeerName } from './peer-paths';
import { serveChild } from './serve-child';

interface PeerServiceModule {
  serve(spec: unknown): Promise<() => Promise<void>>;
}

async function main(): Promise<void> {
  const peer = process.argv[2] ?? '';
  if (!(PEERS as readonly string[]).includes(peer)) throw new Error(`usage: peer-service.ts <${PEERS.join('|')}> <spec>`);
  const spec: unknown = JSON.parse(process.argv[3] ?? '');
  const mod = (await import(peerModuleUrl(peer as PeerName, 'service'))) as PeerServiceModule;
  const shutdown = await mod.serve(spec);
  serveChild(peer, shutdown);
}

main().catch((err: unknown) => {
  console.error('[peer-service] fatal:', err);
  process.exit(1);
});
