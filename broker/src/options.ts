import type { DecodeLimits } from '@warren/jsonrpc';
import { silentLogger, type Logger } from '@warren/logger';
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
  /** Bearer tokens accepted on every route but the probes and /metrics; empty turns auth off. @default [] */
  readonly tokens?: readonly string[];
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
  /** Interval of the SSE comment lines that keep proxies from closing an idle stream. @default 15000 */
  readonly sseKeepAliveMs?: number;
  /** Limits the JSON-RPC decoder applies to POST /rpc and MCP posts (maxBytes follows bodyLimitBytes). */
  readonly decodeLimits?: Omit<DecodeLimits, 'maxBytes'>;
  /** Where GET /inflight reads calls in flight across the cluster (see @warren/inflight). @default none: answers a note */
  readonly inflight?: InflightSource;
  /** Dependencies GET /readyz reports on besides RabbitMQ (e.g. Redis). @default [] */
  readonly probes?: readonly ReadinessProbe[];
  /** On close, time requests under way get to finish before their connections are cut. @default 10000 */
  readonly shutdownTimeoutMs?: number;
  /** Register prom-client's process and Node.js metrics too. @default true */
  readonly defaultMetrics?: boolean;
  /** The web console at `GET /` and its live feed (docs/console.md). @default on, with ConsoleOptions' defaults */
  readonly console?: ConsoleOptions;
  /** @default a silent logger */
  readonly logger?: Logger;
}

export type ResolvedGatewayOptions = Required<Omit<GatewayOptions, 'allowMethods' | 'inflight' | 'rateLimit' | 'console'>> & Pick<GatewayOptions, 'allowMethods' | 'inflight' | 'console'> & {
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
  sseKeepAliveMs: 15_000,
  shutdownTimeoutMs: 10_000,
} as const;

/** Fills in defaults and names the bad field, so a misconfiguration fails at start-up. */
export function resolveGatewayOptions(options: GatewayOptions = {}): ResolvedGatewayOptions {
  const resolved: ResolvedGatewayOptions = {
    host: options.host ?? gatewayDefaults.host,
    port: options.port ?? gatewayDefaults.port,
    bodyLimitBytes: options.bodyLimitBytes ?? gatewayDefaults.bodyLimitBytes,
    defaultTimeoutMs: options.defaultTimeoutMs ?? gatewayDefaults.defaultTimeoutMs,
    maxTimeoutMs: options.maxTimeoutMs ?? gatewayDefaults.maxTimeoutMs,
    maxConcurrentCalls: options.maxConcurrentCalls ?? gatewayDefaults.maxConcurrentCalls,
    tokens: options.tokens ?? [],
    maxSessions: options.maxSessions ?? gatewayDefaults.maxSessions,
    sseKeepAliveMs: options.sseKeepAliveMs ?? gatewayDefaults.sseKeepAliveMs,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? gatewayDefaults.shutdownTimeoutMs,
    decodeLimits: options.decodeLimits ?? {},
    probes: options.probes ?? [],
    defaultMetrics: options.defaultMetrics ?? true,
    logger: options.logger ?? silentLogger(),
    rateLimit: resolveRateLimit(options.rateLimit),
    ...(options.allowMethods === undefined ? {} : { allowMethods: options.allowMethods }),
    ...(options.inflight === undefined ? {} : { inflight: options.inflight }),
    ...(options.console === undefined ? {} : { console: options.console }),
  };
  for (const field of ['bodyLimitBytes', 'defaultTimeoutMs', 'maxTimeoutMs', 'maxConcurrentCalls', 'maxSessions', 'sseKeepAliveMs', 'shutdownTimeoutMs'] as const) {
    if (!Number.isSafeInteger(resolved[field]) || resolved[field] < 1) throw new RangeError(`GatewayOptions.${field} must be a positive integer, got ${String(resolved[field])}`);
  }
  if (!Number.isSafeInteger(resolved.port) || resolved.port < 0 || resolved.port > 65535) throw new RangeError(`GatewayOptions.port must be 0-65535, got ${String(resolved.port)}`);
  if (resolved.defaultTimeoutMs > resolved.maxTimeoutMs) throw new RangeError('GatewayOptions.defaultTimeoutMs must not exceed maxTimeoutMs');
  if (resolved.tokens.some((t) => t.length === 0)) throw new RangeError('GatewayOptions.tokens must not contain an empty token');
  if (resolved.allowMethods?.some((m) => m.length === 0 || m === '*')) throw new RangeError('GatewayOptions.allowMethods entries must be non-empty and not a bare "*" (leave it unset to allow all)');
  return resolved;
}

/** Turns the allow-list into a predicate; undefined allows every method. */
export function methodFilter(allow: readonly string[] | undefined): (method: string) => boolean {
  if (allow === undefined) return () => true;
  const exact = new Set(allow.filter((m) => !m.endsWith('*')));
  const prefixes = allow.filter((m) => m.endsWith('*')).map((m) => m.slice(0, -1));
  return (method) => exact.has(method) || prefixes.some((p) => method.startsWith(p));
}
