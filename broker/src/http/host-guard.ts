import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sendRefusal } from './errors';

/**
 * DNS-rebinding protection: which `Host` names and `Origin`s the gateway
 * serves. A web page on `evil.example` that makes its name resolve to
 * 127.0.0.1 reaches a local gateway with `Host: evil.example:18001` and a
 * matching Origin; refusing Host names the gateway was not told about closes
 * that door, and refusing foreign Origins closes the other one (a page on
 * another site calling a gateway it can reach). The MCP specification asks
 * servers to check Origin on every connection and answer 403.
 */
export interface HostGuardOptions {
  /**
   * Host names (no port) requests may name in `Host`. `*` accepts any. A
   * leading `*.` accepts subdomains (`*.example.com`).
   */
  readonly allowedHosts: readonly string[];
  /**
   * Origins (`scheme://host[:port]`) a browser page may call from, besides
   * the gateway's own origin (Origin naming the same host and port as Host).
   * `*` accepts any.
   */
  readonly allowedOrigins: readonly string[];
}

/** Host names that always mean this machine. */
export const loopbackHosts: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** Whether a listen address only accepts connections from this machine. */
export function isLoopbackAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * The Host names accepted when none are configured: on a loopback bind only
 * loopback names (nobody else can connect, so any other name is a rebinding);
 * on any other bind every name, since the gateway cannot know what DNS calls
 * it (set `allowedHosts` there; start-up warns when auth is off too).
 */
export function defaultAllowedHosts(bindHost: string): readonly string[] {
  return isLoopbackAddress(bindHost) ? loopbackHosts : ['*'];
}

/**
 * Checks `Host` and `Origin` on every request, public routes included (a
 * rebound page could read /metrics too): a Host outside the list or a
 * foreign Origin answers 403 with a JSON-RPC error body (id null) and goes
 * no further. Requests without Origin (curl, SDKs, servers) pass the Origin
 * check: only browsers send it, and only browsers can be tricked.
 */
export function registerHostGuard(app: FastifyInstance, o: HostGuardOptions): void {
  const hostOk = hostMatcher(o.allowedHosts);
  const anyOrigin = o.allowedOrigins.includes('*');
  const origins = new Set(o.allowedOrigins.map((x) => x.toLowerCase().replace(/\/+$/, '')));
  const hosts = new HostCache();
  // A callback hook (no promise per request); a refusal sends and never calls `done`.
  app.addHook('onRequest', (request, reply, done) => {
    const host = hosts.read(request.headers.host);
    if (host === undefined || !hostOk(host.name)) {
      reply.log.debug({ host: request.headers.host, ip: request.ip }, 'request refused: Host not allowed');
      void sendRefusal(reply, 'WARREN_GW_FORBIDDEN_HOST');
      return;
    }
    const origin = request.headers.origin;
    if (origin === undefined || anyOrigin || origins.has(origin.toLowerCase()) || sameOrigin(origin, host.full)) return done();
    reply.log.debug({ origin, ip: request.ip }, 'request refused: Origin not allowed');
    void sendRefusal(reply, 'WARREN_GW_FORBIDDEN_ORIGIN');
  });
}

type Host = { readonly name: string; readonly full: string };

/**
 * Host headers already read: every request of a client sends the same one, and parsing it as a URL
 * costs more than the rest of the guard. Bounded (the header is the client's to choose): when full,
 * it starts again.
 */
class HostCache {
  private readonly entries = new Map<string, Host | null>();

  read(header: string | undefined): Host | undefined {
    if (typeof header !== 'string' || header.length === 0) return undefined;
    let host = this.entries.get(header);
    if (host === undefined) {
      if (this.entries.size >= 256) this.entries.clear();
      host = hostOf(header) ?? null;
      this.entries.set(header, host);
    }
    return host ?? undefined;
  }
}

/** A Host header, split; undefined when unreadable. */
function hostOf(header: string): Host | undefined {
  try {
    const url = new URL(`http://${header}`);
    if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return undefined;
    return { name: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(), full: url.host };
  } catch {
    return undefined;
  }
}

/** An Origin naming exactly the host and port the request was sent to: the gateway's own pages. */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === host;
  } catch {
    // `null` (sandboxed frames, file: pages) and garbage are foreign.
    return false;
  }
}

function hostMatcher(allowed: readonly string[]): (name: string) => boolean {
  if (allowed.includes('*')) return () => true;
  const exact = new Set(allowed.filter((h) => !h.startsWith('*.')).map((h) => h.replace(/^\[|\]$/g, '').toLowerCase()));
  const suffixes = allowed.filter((h) => h.startsWith('*.')).map((h) => h.slice(1).toLowerCase());
  return (name) => exact.has(name) || suffixes.some((s) => name.endsWith(s) && name.length > s.length);
}
