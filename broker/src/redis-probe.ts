import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import type { ReadinessProbe } from './probes';

/**
 * A readiness probe that PINGs a Redis server over a fresh connection: enough
 * for /readyz to report Redis's state without the broker depending on a
 * Redis client (only @warren/inflight speaks Redis for real). Not required
 * for readiness: in-flight tracking is an aid, not a gate.
 *
 * @example
 * await startBroker({ urls, probes: [redisPingProbe('redis://127.0.0.1:6379')] });
 */
export function redisPingProbe(url: string, timeoutMs = 1000): ReadinessProbe {
  const target = new URL(url);
  const tls = target.protocol === 'rediss:';
  const port = Number(target.port || 6379);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const commands: string[] = [];
  const password = decodeURIComponent(target.password);
  const username = decodeURIComponent(target.username);
  if (password) commands.push(resp(username ? ['AUTH', username, password] : ['AUTH', password]));
  commands.push(resp(['PING']));
  return {
    name: 'redis',
    required: false,
    check: () =>
      new Promise((resolve) => {
        const socket: Socket = tls ? connectTls({ host, port, servername: host }) : connectTcp({ host, port });
        let received = '';
        const done = (ok: boolean, state: string): void => {
          clearTimeout(timer);
          socket.destroy();
          resolve({ ok, state });
        };
        const timer = setTimeout(() => done(false, 'timeout'), timeoutMs);
        socket.once(tls ? 'secureConnect' : 'connect', () => socket.write(commands.join('')));
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
          if (received.startsWith('-')) done(false, /NOAUTH|WRONGPASS|invalid password/i.test(received) ? 'auth_failed' : 'error');
          else if (received.includes('+PONG')) done(true, 'ready');
        });
        socket.on('error', () => done(false, 'unreachable'));
        socket.on('close', () => done(false, 'closed'));
      }),
  };
}

/** A command in RESP, Redis's wire format. */
function resp(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}
