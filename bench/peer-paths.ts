/**
 * Where the peer frameworks' package lives (bench/peers: its own package.json and lockfile, outside
 * the root workspaces) and where its compiled programs are, from bench/ (tsx) or bench/dist/ (node).
 */
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The peers the bench measures, each a `<peer>-service` and a `<peer>-caller` module in bench/peers/src. */
export const PEERS = ['moleculer', 'nestjs-rmq', 'rabbitmq-client'] as const;
export type PeerName = (typeof PEERS)[number];

/** Which module files implement a peer (nestjs-rmq is Nest's RMQ transport). */
const files: Record<PeerName, string> = { moleculer: 'moleculer', 'nestjs-rmq': 'nestjs', 'rabbitmq-client': 'rabbitmq-client' };

const benchDir = basename(__dirname) === 'dist' ? dirname(__dirname) : __dirname;
export const PEERS_DIR = join(benchDir, 'peers');

/** The URL to import() a peer's compiled service or caller module by (ESM: NestJS 12 is). */
export function peerModuleUrl(peer: PeerName, role: 'service' | 'caller'): string {
  return pathToFileURL(join(PEERS_DIR, 'dist', `${files[peer]}-${role}.js`)).href;
}
