/**
 * Installs the peer frameworks on demand: their package (bench/peers) is not a workspace, so the
 * root `npm ci` stays lean and CI's lint never needs it. Before a run that includes a peer target,
 * `npm ci --prefix bench/peers` runs when its node_modules is missing or was installed from another
 * package-lock.json (a hash of the lockfile is stamped into node_modules after each install), then
 * the peer programs are compiled (bench/peers/tsconfig.json, into bench/peers/dist).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PEERS_DIR } from './peer-paths';

/** What decides an install: the lockfile's hash, and the stamp the last install left (undefined: none, or no node_modules). */
export interface PeersState {
  readonly lockHash: string;
  readonly stamp: string | undefined;
}

/** An install is needed when nothing was installed by the bench, or what was came from another lockfile. */
export function installNeeded(state: PeersState): boolean {
  return state.stamp === undefined || state.stamp.trim() !== state.lockHash;
}

const stampFile = join(PEERS_DIR, 'node_modules', '.bench-lock-sha256');

function readState(): PeersState {
  const lockHash = createHash('sha256').update(readFileSync(join(PEERS_DIR, 'package-lock.json'))).digest('hex');
  return { lockHash, stamp: existsSync(stampFile) ? readFileSync(stampFile, 'utf8') : undefined };
}

/** npm's own CLI when the bench runs under `npm run` (npm_execpath), else `npm` from the PATH. */
function npm(args: readonly string[]): void {
  const cli = process.env['npm_execpath'];
  // stdout is the bench's table and JSON: npm's output goes to stderr.
  const stdio: ['ignore', number, number] = ['ignore', 2, 2];
  if (cli && cli.endsWith('.js')) execFileSync(process.execPath, [cli, ...args], { stdio });
  else execFileSync('npm', args, { stdio });
}

/** Installs (when needed) and compiles the peer programs; throws when either fails. */
export function ensurePeers(): void {
  const state = readState();
  if (installNeeded(state)) {
    const why = state.stamp === undefined ? 'not installed yet' : 'installed from another package-lock.json';
    console.error(`# installing the peer frameworks (${why}): npm ci --prefix bench/peers`);
    npm(['ci', '--prefix', PEERS_DIR, '--no-audit', '--no-fund']);
    writeFileSync(stampFile, state.lockHash + '\n');
  }
  console.error('# building the peer programs (bench/peers/tsconfig.json)');
  const tsc = join(resolve(PEERS_DIR, '..', '..'), 'node_modules', '.bin', 'tsc');
  execFileSync(tsc, ['-p', join(PEERS_DIR, 'tsconfig.json')], { stdio: ['ignore', 2, 2] });
}
