import { Redis } from 'ioredis';

/** What a PING found: `ready`, or why not. */
export type RedisPingResult =
  | { readonly ok: true; readonly state: 'ready' }
  | { readonly ok: false; readonly state: 'unreachable' | 'auth_failed' | 'timeout' | 'error' | 'closed' };

/** One kept connection that PINGs Redis on demand; `close()` ends it. */
export interface RedisPing {
  ping(): Promise<RedisPingResult>;
  close(): void;
}

/**
 * A Redis health check for readiness probes (the broker's /readyz): one connection, opened at the
 * first ping and kept, so however many probes arrive Redis sees one client; a failed ping drops it
 * and the next opens a new one. Never rejects, and never waits past `timeoutMs`: a Redis that is
 * down, slow or silent answers `{ ok: false }` in time; one that refuses the URL's credentials too. The client does not retry on its own or
 * queue commands while disconnected, and its socket does not hold the process open.
 *
 * @example
 * const redis = redisPing('redis://127.0.0.1:6379');
 * await redis.ping(); // { ok: true, state: 'ready' }
 * redis.close();
 */
export function redisPing(url: string, timeoutMs = 1000): RedisPing {
  // The credentials are sent by hand (AUTH before the first PING): ioredis would let a password the
  // server has no use for pass with a warning, where a probe must say the configuration is wrong.
  const target = new URL(url);
  const username = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  target.username = '';
  target.password = '';
  const address = target.toString();
  let client: Redis | undefined;
  let closed = false;

  const drop = (): void => {
    client?.disconnect();
    client = undefined;
  };

  const open = (): Redis => {
    const redis = new Redis(address, {
      lazyConnect: true,
      enableOfflineQueue: false,
      enableReadyCheck: false,
      // Nothing but AUTH and PING on the wire (no HELLO, no CLIENT SETINFO): a probe asks no more of
      // the server, and any server that answers PING (an old one, a proxy) passes.
      protocol: 2,
      disableClientInfo: true,
      maxRetriesPerRequest: 0,
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
      disconnectTimeout: timeoutMs,
      // The next ping reconnects; the client itself never does.
      retryStrategy: () => null,
    });
    // Errors are answered by ping(); without a listener ioredis would log them.
    redis.on('error', () => undefined);
    redis.on('connect', () => (redis.stream as { unref?: () => void } | undefined)?.unref?.());
    return redis;
  };

  const attempt = async (redis: Redis): Promise<RedisPingResult> => {
    try {
      if (redis.status === 'wait') {
        await redis.connect();
        if (password !== '') await (username === '' ? redis.auth(password) : redis.auth(username, password));
      }
      // Upper case, as redis-cli sends it (call(): ioredis's ping() would send it in lower case).
      await redis.call('PING');
      return { ok: true, state: 'ready' };
    } catch (err) {
      return { ok: false, state: failure(err) };
    }
  };

  const check = async (): Promise<RedisPingResult> => {
    const redis = (client ??= open());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<RedisPingResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, state: 'timeout' }), timeoutMs);
      timer.unref();
    });
    const result = await Promise.race([attempt(redis), timeout]);
    clearTimeout(timer);
    if (closed) return { ok: false, state: 'closed' };
    // A failed ping leaves the connection in an unknown state: start afresh next time.
    if (!result.ok && client === redis) drop();
    return result;
  };

  // Pings asked for while one runs share it (a fresh connection takes one connect and one AUTH).
  let running: Promise<RedisPingResult> | undefined;
  return {
    ping() {
      if (closed) return Promise.resolve({ ok: false, state: 'closed' });
      running ??= check().finally(() => (running = undefined));
      return running;
    },
    close() {
      closed = true;
      drop();
    },
  };
}

function failure(err: unknown): 'unreachable' | 'auth_failed' | 'timeout' | 'error' {
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (/NOAUTH|WRONGPASS|invalid password/i.test(text)) return 'auth_failed';
  if (code === 'ETIMEDOUT' || /timed out|timeout/i.test(text)) return 'timeout';
  if (name === 'ReplyError') return 'error';
  if (typeof code === 'string' || /connect|closed|Connection is closed|ECONN|ENOTFOUND|EHOSTUNREACH/i.test(text)) return 'unreachable';
  return 'error';
}
