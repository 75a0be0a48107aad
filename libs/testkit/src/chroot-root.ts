import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A Debian root made by `debootstrap`, cached in a directory outside the
 * repository (CI runs in a fresh clone on the same machine, so the cache
 * outlives it). A root is built in `<dir>.partial` and renamed into place
 * with a marker file only once debootstrap succeeded: a run killed halfway
 * leaves a `.partial` (or a root without its marker), which the next run
 * unmounts and rebuilds. Removal never crosses into a mount (`rm
 * --one-file-system`, after unmounting everything under the path), so a
 * stale bind mount of the machine's /dev can never be deleted through.
 */
export interface ChrootSpec {
  /** Where the finished root lives, e.g. `/var/cache/warren/rmq4-trixie`. */
  readonly dir: string;
  /** Debian suite, e.g. `trixie`. */
  readonly suite: string;
  /** Packages added to the minbase variant, e.g. `['rabbitmq-server']`. */
  readonly include: readonly string[];
  /** Debian mirror, e.g. `http://deb.debian.org/debian`. */
  readonly mirror: string;
  /** Progress lines (debootstrap takes minutes). */
  readonly log: (line: string) => void;
}

const MARKER = '.warren-root-complete';

/** What a complete root was built from; a root built from something else is rebuilt. */
function recipe(spec: ChrootSpec): string {
  return `${spec.suite} minbase ${[...spec.include].sort().join(',')}\n`;
}

/** Whether `spec.dir` holds a finished root of this recipe. */
export function rootComplete(spec: ChrootSpec): boolean {
  try {
    return readFileSync(join(spec.dir, MARKER), 'utf8') === recipe(spec);
  } catch {
    return false;
  }
}

/** Makes sure a finished root is at `spec.dir`, running debootstrap (installed first if missing) when it is not. */
export async function ensureRoot(spec: ChrootSpec): Promise<void> {
  if (rootComplete(spec)) return;
  const partial = `${spec.dir}.partial`;
  await removeTree(spec.dir);
  await removeTree(partial);
  mkdirSync(dirname(spec.dir), { recursive: true });
  if (!(await which('debootstrap'))) {
    spec.log('installing debootstrap (apt-get)');
    await run('apt-get', ['update', '-qq']);
    await run('apt-get', ['install', '-y', '-qq', 'debootstrap'], { DEBIAN_FRONTEND: 'noninteractive' });
  }
  spec.log(`debootstrap ${spec.suite} into ${partial} from ${spec.mirror} (a few minutes, once; cached afterwards)`);
  try {
    await run('debootstrap', ['--variant=minbase', `--include=${spec.include.join(',')}`, spec.suite, partial, spec.mirror], {}, 30 * 60_000);
  } catch (err) {
    // debootstrap mounts proc and sys in its target while it installs; a failure can leave them.
    await unmountUnder(partial);
    throw err;
  }
  await unmountUnder(partial);
  writeFileSync(join(partial, MARKER), recipe(spec));
  renameSync(partial, spec.dir);
  spec.log(`root ready at ${spec.dir}`);
}

/** Mount points at or under `dir`, deepest first (the order to unmount them in). */
export function mountsUnder(dir: string): string[] {
  const prefix = dir.replace(/\/+$/, '');
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    // mountinfo escapes spaces and the like as octal (\040).
    .map((p) => p.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8))))
    .filter((p) => p === prefix || p.startsWith(`${prefix}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Unmounts everything at or under `dir` (lazily when busy); rejects if something stays mounted. */
export async function unmountUnder(dir: string): Promise<void> {
  for (const point of mountsUnder(dir)) {
    await run('umount', [point]).catch(() => run('umount', ['-l', point]));
  }
  const left = mountsUnder(dir);
  if (left.length > 0) throw new Error(`still mounted under ${dir}: ${left.join(', ')}`);
}

/** Mounts `/proc` (a fresh procfs) and `/dev` (a bind of the machine's) inside the root, unless they already are. */
export async function mountSystem(root: string): Promise<void> {
  const mounted = new Set(mountsUnder(root));
  if (!mounted.has(join(root, 'proc'))) await run('mount', ['-t', 'proc', 'proc', join(root, 'proc')]);
  if (!mounted.has(join(root, 'dev'))) await run('mount', ['--bind', '/dev', join(root, 'dev')]);
}

/** Removes a tree that may hold mounts: unmounts them first, and `rm` never crosses a file system boundary. */
async function removeTree(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  await unmountUnder(dir);
  await run('rm', ['-rf', '--one-file-system', dir]);
}

/** Pids of the processes whose root directory is `root` (everything running inside the chroot). */
export function processesIn(root: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/root`) === root) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** The uid and gid of `user` in the root's own /etc/passwd (they need not match the machine's). */
export function userIn(root: string, user: string): { uid: number; gid: number } {
  const line = readFileSync(join(root, 'etc', 'passwd'), 'utf8').split('\n').find((l) => l.startsWith(`${user}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (!uid || !gid) throw new Error(`no ${user} user in ${root}`);
  return { uid: Number(uid), gid: Number(gid) };
}

function which(command: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${command}`]).then(() => true, () => false);
}

/** Runs a command; resolves with stdout, rejects naming it with its stderr. */
export function run(file: string, args: readonly string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${(stderr || err.message).trim().split('\n').slice(-5).join('\n')}`, { cause: err }));
      else resolve(stdout);
    });
  });
}
