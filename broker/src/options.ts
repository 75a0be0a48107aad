import type { ManagementApi } from './queue-stats';
import type { DecodeLimits } from '@warren/jsonrpc';
import { silentLogger, type Logger } from '@warren/logger';
import type { ScheduleCounts } from '@warren/schedules';
import { defaultAllowedHosts } from './http/host-guard';
import type { ConsoleOptions } from './console/options';
import type { InflightSource } from './inflight';
import type { ReadinessProbe } from './probes';
import { resolveRateLimit, type RateLimitOptions, type ResolvedRateLimit } from './http/rate-limit';

/** What the HTTP gateway does; every field has a default, resolved and checked by {@link resolveGatewayOptions}. */
export interface GatewayOptions {
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /** Port to listen on; 0 picks a free one (tests). @default 18001 */
  readonly port?: number;
  /** Largest request body; larger ones answer 413. @default 1048576 (1 MiB) */
  readonly bodyLimitBytes?: number;
  /** Deadline of a call whose request carries no `X-Timeout-Ms`. @default 30000 */
  readonly defaultTimeoutMs?: number;
  /** Ceiling on `X-Timeout-Ms` (and on the default); larger asks are cut to it. @default 60000 */
  readonly maxTimeoutMs?: number;
  /**
   * Calls (requests and notifications, HTTP and MCP together) the gateway
   * relays at once; one more answers Overloaded (-32004) at once instead of
   * waiting in a queue. @default 1000
   */
  readonly maxConcurrentCalls?: number;
  /**
   * `'token'`: every route but the probes and /metrics needs one of `tokens`;
   * `'none'`: no auth (say so explicitly; main.ts refuses to start otherwise).
   * @default 'token' when `tokens` is given, else 'none'
   */
  readonly auth?: 'token' | 'none';
  /**
   * Bearer tokens accepted on every route but the probes and /metrics. A
   * plain string is a client token: it sees only its own calls in
   * /inflight. A {@link TokenSpec} can make it an operator or narrow its
   * methods. An empty list is refused (leave it out, or `auth: 'none'`).
   * @default none
   */
  readonly tokens?: readonly (string | TokenSpec)[];
  /**
   * Host names (no port) the `Host` header may name; others answer 403
   * (DNS rebinding). `*` accepts any; `*.example.com` accepts subdomains.
   * @default on a loopback bind `['localhost', '127.0.0.1', '::1']` and the bind address; otherwise `['*']`
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Origins (`https://console.example.com`) browser pages may call from;
   * the gateway's own origin is always accepted, requests without Origin
   * too. Any other Origin answers 403. `*` accepts any. @default []
   */
  readonly allowedOrigins?: readonly string[];
  /** Time a request gets to send its headers and body; past it: 408, connection closed. Streams, once open, are exempt. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** Time a request gets to send its headers; past it: 408, connection closed. At most `requestTimeoutMs`. @default 10000 */
  readonly headersTimeoutMs?: number;
  /**
   * Methods exposed through the gateway (POST /rpc and MCP tools): exact names,
   * or a prefix ending in `*` (`calc.*`). Undefined exposes every method.
   * `rpc.discover` is a method like any other here. @default undefined
   */
  readonly allowMethods?: readonly string[];
  /**
   * Token-bucket rate limits per client IP and per bearer token, on every
   * route but the probes and /metrics. A request over a limit answers 429
   * with `-32004 Overloaded` and `Retry-After`, and reaches nothing behind
   * the gateway. @default undefined (no limit)
   */
  readonly rateLimit?: RateLimitOptions;
  /** Most MCP sessions (SSE and Streamable HTTP together); one more answers 503. @default 1000 */
  readonly maxSessions?: number;
  /**
   * Most MCP sessions one bearer token may hold open. One more closes the token's least recently
   * used idle session (no request open) to make room, or answers 429 when none is idle. @default 100
   */
  readonly maxSessionsPerToken?: number;
  /**
   * Most MCP sessions one client address may hold open without auth; one more answers 429.
   * Authenticated sessions count against their token only, never their address. @default 100
   */
  readonly maxSessionsPerIp?: number;
  /** A session whose client has not completed `initialize` by then is closed. @default 10000 */
  readonly sessionInitTimeoutMs?: number;
  /**
   * Bytes an MCP session's stream may have queued for a client that does not
   * read (SSE stream, Streamable HTTP response or stream); past it the
   * stream is cut and the session ended, with a warn line. @default 4194304 (4 MiB)
   */
  readonly maxSessionOutputBytes?: number;
  /** Interval of the SSE comment lines that keep proxies from closing an idle stream. @default 15000 */
  readonly sseKeepAliveMs?: number;
  /** Limits the JSON-RPC decoder applies to POST /rpc and MCP posts (maxBytes follows bodyLimitBytes). */
  readonly decodeLimits?: Omit<DecodeLimits, 'maxBytes'>;
  /** Where GET /inflight reads calls in flight across the cluster (see @warren/inflight). @default none: answers a note */
  readonly inflight?: InflightSource;
  /** Dependencies GET /readyz reports on besides RabbitMQ (e.g. Redis). @default [] */
  readonly probes?: readonly ReadinessProbe[];
  /** Fired, missed and skipped occurrences per schedule, read at scrape time for /metrics (schedules-wiring.ts). @default none: no schedule metrics */
  readonly scheduleCounts?: () => ReadonlyMap<string, ScheduleCounts>;
  /**
   * What the broker runs on, reported by GET /readyz and GET /services (`"mode"`): `'rabbitmq'`,
   * or `'embedded'` when the broker and the services share one process over the in-memory
   * broker and stores (nothing durable; docs/embedded.md). @default 'rabbitmq'
   */
  readonly mode?: 'rabbitmq' | 'embedded';
  /** On close, time requests under way get to finish before their connections are cut. @default 10000 */
  readonly shutdownTimeoutMs?: number;
  /** Register prom-client's process and Node.js metrics too. @default true */
  readonly defaultMetrics?: boolean;
  /** The web console at `GET /` and its live feed (docs/console.md). @default on, with ConsoleOptions' defaults */
  readonly console?: ConsoleOptions;
  /**
   * The RabbitMQ management HTTP API, for the queue figures of GET /services, the console and the
   * metrics: ready and unacked messages, publish/deliver/ack rates, dead-letter and delay-queue
   * depths (docs/gateway-operators.md, "Queue figures"). Without it (or while it does not answer) passive
   * declares over AMQP give ready messages, consumers and dead letters only. @default undefined (AMQP only)
   */
  readonly rabbitmqManagement?: ManagementApi;
  /** @default a silent logger */
  readonly logger?: Logger;
}

/** A bearer token with its scope. */
export interface TokenSpec {
  readonly token: string;
  /** Sees every call in /inflight, not only its own. @default false */
  readonly operator?: boolean;
  /** Methods this token may call (same form as `allowMethods`, applied on top of it). @default every method the gateway exposes */
  readonly allowMethods?: readonly string[];
}

export interface ResolvedToken {
  readonly token: string;
  readonly operator: boolean;
  readonly allowMethods?: readonly string[];
}

export type ResolvedGatewayOptions = Required<Omit<GatewayOptions, 'allowMethods' | 'inflight' | 'rateLimit' | 'tokens' | 'console' | 'rabbitmqManagement' | 'scheduleCounts'>> & Pick<GatewayOptions, 'allowMethods' | 'inflight' | 'console' | 'rabbitmqManagement' | 'scheduleCounts'> & {
  readonly tokens: readonly ResolvedToken[];
  readonly rateLimit: ResolvedRateLimit | undefined;
};

export const gatewayDefaults = {
  host: '127.0.0.1',
  port: 18001,
  bodyLimitBytes: 1024 * 1024,
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 60_000,
  maxConcurrentCalls: 1000,
  maxSessions: 1000,
  maxSessionsPerToken: 100,
  maxSessionsPerIp: 100,
  sessionInitTimeoutMs: 10_000,
  maxSessionOutputBytes: 4 * 1024 * 1024,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  allowedOrigins: [] as readonly string[],
  sseKeepAliveMs: 15_000,
  shutdownTimeoutMs: 10_000,
} as const;

/** Fills in defaults and names the bad field, so a misconfiguration fails at start-up. */
export function resolveGatewayOptions(options: GatewayOptions = {}): ResolvedGatewayOptions {
  const host = options.host ?? gatewayDefaults.host;
  const tokens = (options.tokens ?? []).map((t): ResolvedToken => (typeof t === 'string' ? { token: t, operator: false } : { ...t, operator: t.operator ?? false }));
  const resolved: ResolvedGatewayOptions = {
    host,
    port: options.port ?? gatewayDefaults.port,
    bodyLimitBytes: options.bodyLimitBytes ?? gatewayDefaults.bodyLimitBytes,
    defaultTimeoutMs: options.defaultTimeoutMs ?? gatewayDefaults.defaultTimeoutMs,
    maxTimeoutMs: options.maxTimeoutMs ?? gatewayDefaults.maxTimeoutMs,
    maxConcurrentCalls: options.maxConcurrentCalls ?? gatewayDefaults.maxConcurrentCalls,
    auth: options.auth ?? (options.tokens === undefined ? 'none' : 'token'),
    tokens,
    allowedHosts: options.allowedHosts ?? [...new Set([...defaultAllowedHosts(host), host.replace(/^\[|\]$/g, '')])],
    allowedOrigins: options.allowedOrigins ?? gatewayDefaults.allowedOrigins,
    requestTimeoutMs: options.requestTimeoutMs ?? gatewayDefaults.requestTimeoutMs,
    headersTimeoutMs: options.headersTimeoutMs ?? Math.min(gatewayDefaults.headersTimeoutMs, options.requestTimeoutMs ?? gatewayDefaults.requestTimeoutMs),
    maxSessions: options.maxSessions ?? gatewayDefaults.maxSessions,
    maxSessionsPerToken: options.maxSessionsPerToken ?? gatewayDefaults.maxSessionsPerToken,
    maxSessionsPerIp: options.maxSessionsPerIp ?? gatewayDefaults.maxSessionsPerIp,
    sessionInitTimeoutMs: options.sessionInitTimeoutMs ?? gatewayDefaults.sessionInitTimeoutMs,
    maxSessionOutputBytes: options.maxSessionOutputBytes ?? gatewayDefaults.maxSessionOutputBytes,
    sseKeepAliveMs: options.sseKeepAliveMs ?? gatewayDefaults.sseKeepAliveMs,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? gatewayDefaults.shutdownTimeoutMs,
    decodeLimits: options.decodeLimits ?? {},
    probes: options.probes ?? [],
    defaultMetrics: options.defaultMetrics ?? true,
    mode: options.mode ?? 'rabbitmq',
    logger: options.logger ?? silentLogger(),
    rateLimit: resolveRateLimit(options.rateLimit),
    ...(options.allowMethods === undefined ? {} : { allowMethods: options.allowMethods }),
    ...(options.inflight === undefined ? {} : { inflight: options.inflight }),
    ...(options.scheduleCounts === undefined ? {} : { scheduleCounts: options.scheduleCounts }),
    ...(options.console === undefined ? {} : { console: options.console }),
    ...(options.rabbitmqManagement === undefined ? {} : { rabbitmqManagement: options.rabbitmqManagement }),
  };
  const positive = [
    'bodyLimitBytes', 'defaultTimeoutMs', 'maxTimeoutMs', 'maxConcurrentCalls', 'maxSessions', 'maxSessionsPerToken', 'maxSessionsPerIp',
    'sessionInitTimeoutMs', 'maxSessionOutputBytes', 'requestTimeoutMs', 'headersTimeoutMs', 'sseKeepAliveMs', 'shutdownTimeoutMs',
  ] as const;
  for (const field of positive) {
    if (!Number.isSafeInteger(resolved[field]) || resolved[field] < 1) throw new RangeError(`GatewayOptions.${field} must be a positive integer, got ${String(resolved[field])}`);
  }
  if (!Number.isSafeInteger(resolved.port) || resolved.port < 0 || resolved.port > 65535) throw new RangeError(`GatewayOptions.port must be 0-65535, got ${String(resolved.port)}`);
  if (resolved.defaultTimeoutMs > resolved.maxTimeoutMs) throw new RangeError('GatewayOptions.defaultTimeoutMs must not exceed maxTimeoutMs');
  if (resolved.headersTimeoutMs > resolved.requestTimeoutMs) throw new RangeError('GatewayOptions.headersTimeoutMs must not exceed requestTimeoutMs');
  if (options.tokens !== undefined && tokens.length === 0) throw new RangeError("GatewayOptions.tokens is empty: that would turn auth off; leave it out or set auth: 'none'");
  if (tokens.some((t) => typeof t.token !== 'string' || !/^\S+$/.test(t.token))) throw new RangeError('GatewayOptions.tokens must not contain an empty token or one with whitespace');
  if (resolved.auth === 'none' && tokens.length > 0) throw new RangeError("GatewayOptions.auth is 'none' but tokens are given");
  if (resolved.auth === 'token' && tokens.length === 0) throw new RangeError("GatewayOptions.auth is 'token' but no tokens are given");
  if (resolved.auth !== 'none' && resolved.auth !== 'token') throw new RangeError(`GatewayOptions.auth must be 'token' or 'none', got ${String(resolved.auth)}`);
  for (const t of tokens) checkAllowList(t.allowMethods, 'GatewayOptions.tokens[].allowMethods');
  checkAllowList(resolved.allowMethods, 'GatewayOptions.allowMethods');
  return resolved;
}

function checkAllowList(list: readonly string[] | undefined, field: string): void {
  if (list?.some((m) => m.length === 0 || m === '*')) throw new RangeError(`${field} entries must be non-empty and not a bare "*" (leave it unset to allow all)`);
}

/** Turns the allow-list into a predicate; undefined allows every method. */
export function methodFilter(allow: readonly string[] | undefined): (method: string) => boolean {
  if (allow === undefined) return () => true;
  const exact = new Set(allow.filter((m) => !m.endsWith('*')));
  const prefixes = allow.filter((m) => m.endsWith('*')).map((m) => m.slice(0, -1));
  return (method) => exact.has(method) || prefixes.some((p) => method.startsWith(p));
}
