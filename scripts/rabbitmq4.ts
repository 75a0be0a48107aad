// Debian 13's RabbitMQ 4.x node beside the machine's own (libs/testkit
// Rabbit4Node), for the RabbitMQ 4 tier (`npm run test:rmq4`) and .ci/run:
//
//   npx tsx scripts/rabbitmq4.ts start    # debootstrap once (cached), boot, wait for AMQP; idempotent
//   npx tsx scripts/rabbitmq4.ts stop     # stop the node, unmount /proc and /dev in its root
//   npx tsx scripts/rabbitmq4.ts status   # prints running / stopped (exit 0 / 3)
//   npx tsx scripts/rabbitmq4.ts url      # its AMQP URL
//   npx tsx scripts/rabbitmq4.ts ctl -- list_queues name durable   # its rabbitmqctl
//
// Settings (all optional): WARREN_RMQ4_CACHE (the cached root, default
// /var/cache/warren/rmq4-trixie), WARREN_RMQ4_MIRROR (Debian mirror, default
// the machine's apt source for Debian, else http://deb.debian.org/debian),
// WARREN_RMQ4_PORT (AMQP, 5690), WARREN_RMQ4_DIST_PORT (25690). Needs root.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
// The source path, not '@warren/testkit': jest runs the rmq4 global setup (which imports this file)
// without the moduleNameMapper that maps package names to sources.
import { Rabbit4Node, type Rabbit4NodeOptions } from '../libs/testkit/src/rabbit4-node';

/** The node as the environment configures it; shared with the rmq4 jest setup. */
export function rabbit4FromEnv(env: NodeJS.ProcessEnv, log: (line: string) => void): Rabbit4Node {
  const options: Rabbit4NodeOptions = {
    mirror: env['WARREN_RMQ4_MIRROR'] || aptMirror() || 'http://deb.debian.org/debian',
    log,
    ...(env['WARREN_RMQ4_CACHE'] ? { cacheDir: env['WARREN_RMQ4_CACHE'] } : {}),
    ...(env['WARREN_RMQ4_PORT'] ? { port: Number(env['WARREN_RMQ4_PORT']) } : {}),
    ...(env['WARREN_RMQ4_DIST_PORT'] ? { distPort: Number(env['WARREN_RMQ4_DIST_PORT']) } : {}),
  };
  return new Rabbit4Node(options);
}

/** The Debian archive this machine's apt uses (deb822 `URIs:` or a one-line `deb` entry), not its security archive. */
function aptMirror(): string | undefined {
  const files: string[] = ['/etc/apt/sources.list'];
  try {
    for (const f of readdirSync('/etc/apt/sources.list.d')) if (/\.(list|sources)$/.test(f)) files.push(join('/etc/apt/sources.list.d', f));
  } catch {
    // no such directory
  }
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      // `URIs: http://deb.debian.org/debian` (deb822) or `deb [options] http://deb.debian.org/debian bookworm main`.
      const uris = /^URIs:\s*(.*)$/.exec(line)?.[1]?.split(/\s+/) ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line)?.slice(1) ?? [];
      const uri = uris.find((u) => /^https?:\/\/\S+\/debian\/?$/.test(u));
      if (uri) return uri.replace(/\/$/, '');
    }
  }
  return undefined;
}

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  const node = rabbit4FromEnv(process.env, (line) => process.stderr.write(`rabbitmq4: ${line}\n`));
  switch (command) {
    case 'start': {
      const started = Date.now();
      const { booted } = await node.start();
      process.stderr.write(`rabbitmq4: ${booted ? 'started' : 'already running'} (${((Date.now() - started) / 1000).toFixed(1)} s): ${node.url}\n`);
      return 0;
    }
    case 'stop':
      await node.stop();
      process.stderr.write('rabbitmq4: stopped\n');
      return 0;
    case 'status': {
      const up = await node.running();
      process.stdout.write(`${up ? 'running' : 'stopped'}\n`);
      return up ? 0 : 3;
    }
    case 'url':
      process.stdout.write(`${node.url}\n`);
      return 0;
    case 'ctl':
      process.stdout.write(await node.ctl(...(rest[0] === '--' ? rest.slice(1) : rest)));
      return 0;
    default:
      process.stderr.write('usage: tsx scripts/rabbitmq4.ts start|stop|status|url|ctl -- <rabbitmqctl args>\n');
      return 2;
  }
}

if (require.main === module) {
  main().then((code) => process.exit(code), (err: unknown) => {
    process.stderr.write(`rabbitmq4: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
