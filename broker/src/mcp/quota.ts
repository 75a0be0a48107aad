import type { JsonValue } from '@warren/jsonrpc';
import type { GatewayRefusalCode } from '../http/errors';

/** What the quota needs to know of an open session. */
export interface QuotaSession {
  /** The token that opened it; undefined without auth. */
  readonly owner: number | undefined;
  /** The client address that opened it. */
  readonly ip: string;
  /** HTTP requests of the session still open: an SSE session's stream is one, for as long as it lives. */
  readonly open: number;
  /** When a request of the session last started or ended (ms). */
  readonly lastUsed: number;
}

export interface QuotaLimits {
  readonly maxSessions: number;
  readonly maxSessionsPerToken: number;
  readonly maxSessionsPerIp: number;
}

/** Who asks for a new session. */
export interface QuotaClient {
  readonly token: number | undefined;
  readonly ip: string;
}

export type QuotaDecision<S> =
  | { readonly kind: 'admit' }
  /** Over its own quota, the client gives up its least recently used idle session to open this one. */
  | { readonly kind: 'reclaim'; readonly victim: S }
  | { readonly kind: 'refuse'; readonly code: GatewayRefusalCode; readonly data?: Record<string, JsonValue> };

/**
 * Whether a client may open one more MCP session, among the `live` ones (opened or being opened).
 *
 * An authenticated client is counted against its token alone: every client behind one proxy,
 * NAT or host shares an address, so counting tokens by address would let one token lock all the
 * others out until its sessions expire. The address quota is for unauthenticated use, where the
 * address is all there is to tell clients apart.
 *
 * A token at its quota gets its least recently used idle session (no request open, so never an
 * SSE session, whose stream stays open) closed to make room: a client that lost track of its
 * sessions recovers at once instead of waiting for the idle expiry, and it only ever loses its
 * own. With none idle, 429. The address quota does not reclaim: without auth nothing says that
 * two requests from one address are the same client.
 *
 * @example
 * decideQuota(sessions, { token: 0, ip: '10.0.0.1' }, limits) // { kind: 'admit' }
 */
export function decideQuota<S extends QuotaSession>(live: Iterable<S>, client: QuotaClient, limits: QuotaLimits): QuotaDecision<S> {
  let total = 0;
  let mine = 0;
  let oldestIdle: S | undefined;
  for (const s of live) {
    total++;
    const counts = client.token === undefined ? s.owner === undefined && s.ip === client.ip : s.owner === client.token;
    if (!counts) continue;
    mine++;
    if (s.open === 0 && (oldestIdle === undefined || s.lastUsed < oldestIdle.lastUsed)) oldestIdle = s;
  }
  if (client.token === undefined) {
    if (total >= limits.maxSessions) return { kind: 'refuse', code: 'WARREN_GW_TOO_MANY_SESSIONS' };
    if (mine >= limits.maxSessionsPerIp) return { kind: 'refuse', code: 'WARREN_GW_SESSION_QUOTA', data: { scope: 'ip', limit: limits.maxSessionsPerIp } };
    return { kind: 'admit' };
  }
  if (mine >= limits.maxSessionsPerToken) {
    // Reclaiming one of its own keeps the total where it was, so the global limit is no reason to refuse.
    if (oldestIdle !== undefined) return { kind: 'reclaim', victim: oldestIdle };
    return { kind: 'refuse', code: 'WARREN_GW_SESSION_QUOTA', data: { scope: 'token', limit: limits.maxSessionsPerToken } };
  }
  if (total >= limits.maxSessions) return { kind: 'refuse', code: 'WARREN_GW_TOO_MANY_SESSIONS' };
  return { kind: 'admit' };
}
