import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import type { ProbeResult, ReadinessProbe } from './probes';

/** A readiness probe that holds a connection; `close()` ends it (the probe's owner calls it at shutdown). */
export interface RedisPingProbe extends ReadinessProbe {
  close(): void;
}

/**
 * A readiness probe that PINGs a Redis server: enough for /readyz to report
 * Redis's state without the broker depending on a Redis client (only
 * @warren/inflight speaks Redis for real). Not required for readiness:
 * in-flight tracking is an aid, not a gate.
 *
 * One connection, opened at the first check and kept: checks run one at a
 * time on it (a check asked for while one runs shares it), so however many
 * probes arrive, Redis sees one client. A failed check drops the connection
 * and the next one opens a new one. The socket is unref'd, so an idle probe
 * never holds a process open.
 *
 * @example
 * const redis = redisPingProbe('redis://127.0.0.1:6379');
 * await startBroker({ urls, probes: [redis] });
 * // at shutdown
 * redis.close();
 */
export function redisPingProbe(url: string, timeoutMs = 1000): RedisPingProbe {
  const target = new URL(url);
  const tls = target.protocol === 'rediss:';
  const port = Number(target.port || 6379);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const password = decodeURIComponent(target.password);
  const username = decodeURIComponent(target.username);
  const hello = password ? resp(username ? ['AUTH', username, password] : ['AUTH', password]) : '';
  const ping = resp(['PING']);

  let socket: Socket | undefined;
  let connected = false;
  let received = '';
  let settle: ((ok: boolean, state: string) => void) | undefined;
  let closed = false;

  const drop = (): void => {
    socket?.destroy();
    socket = undefined;
    connected = false;
    received = '';
  };

  const open = (): Socket => {
    const s = tls ? connectTls({ host, port, servername: host }) : connectTcp({ host, port });
    s.unref();
    s.once(tls ? 'secureConnect' : 'connect', () => {
      connected = true;
      s.write(hello + ping);
    });
    // Events of a connection already dropped say nothing about the current one.
    s.on('data', (chunk: Buffer) => {
      if (socket !== s) return;
      received += chunk.toString('utf8');
      // Replies, one a line: +OK (AUTH), +PONG, or -ERR/-NOAUTH/-WRONGPASS.
      for (let end = received.indexOf('\r\n'); end >= 0; end = received.indexOf('\r\n')) {
        const line = received.slice(0, end);
        received = received.slice(end + 2);
        if (line.startsWith('-')) settle?.(false, /NOAUTH|WRONGPASS|invalid password/i.test(line) ? 'auth_failed' : 'error');
        else if (line === '+PONG') settle?.(true, 'ready');
      }
      // Nothing but short status lines is expected; a server that sends more is not one to read.
      if (received.length > 4096) settle?.(false, 'error');
    });
    s.on('error', () => {
      if (socket === s) settle?.(false, 'unreachable');
    });
    s.on('close', () => {
      if (socket !== s) return;
      drop();
      settle?.(false, 'closed');
    });
    return s;
  };

  const check = (): Promise<ProbeResult> =>
    new Promise((resolve) => {
      if (closed) return resolve({ ok: false, state: 'closed' });
      const done = (ok: boolean, state: string): void => {
        if (settle !== done) return;
        settle = undefined;
        clearTimeout(timer);
        // A failed check leaves the connection in an unknown state: start afresh next time.
        if (!ok) drop();
        resolve({ ok, state });
      };
      settle = done;
      const timer = setTimeout(() => done(false, 'timeout'), timeoutMs);
      if (!socket) socket = open();
      else if (connected) socket.write(ping);
    });

  return {
    name: 'redis',
    required: false,
    // Concurrent checks are shared by sharedProbe (probe-cache.ts), which /readyz wraps every probe in.
    check,
    close() {
      closed = true;
      settle?.(false, 'closed');
      drop();
    },
  };
}

/** A command in RESP, Redis's wire format. */
function resp(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}
