import { envGiven, envValue, type Env } from '@warren/config';
import type { BrokerOptions } from './broker';
import type { ConsoleOptions } from './console/options';
import type { BucketSpec, RateLimitOptions } from './http/rate-limit';
import type { TokenSpec } from './options';
import type { ManagementApi } from './queue-stats';

/**
 * The environment, as the broker's main passes it. Every variable the broker reads is in
 * @warren/config's schema, with its type and default (docs/configuration.md, generated from it).
 */
export type BrokerEnv = Env;

/**
 * Reads broker options from an environment (main passes process.env; no
 * other module reads it). Each variable parses through the schema (empty
 * counts as unset; a malformed value names its variable); this function
 * adds the rules that join several variables. Unset gateway settings are
 * left out, for resolveGatewayOptions' defaults.
 */
export function brokerOptionsFromEnv(env: BrokerEnv): BrokerOptions & { urls: string[]; redisUrl?: string; keyPrefix?: string; logLevel: string; scheduler: boolean } {
  const urls = envValue(env, 'AMQP_URL');
  return {
    scheduler: envValue(env, 'SCHEDULER') === 'on',
    urls,
    logLevel: envValue(env, 'LOG_LEVEL'),
    ...optional('namespace', envGiven(env, 'WARREN_NAMESPACE')),
    ...optional('userId', envGiven(env, 'AMQP_USER_ID')),
    ...optional('host', envGiven(env, 'GATEWAY_HOST')),
    ...optional('port', envGiven(env, 'GATEWAY_PORT')),
    ...optional('bodyLimitBytes', envGiven(env, 'GATEWAY_BODY_LIMIT_BYTES')),
    ...optional('defaultTimeoutMs', envGiven(env, 'GATEWAY_DEFAULT_TIMEOUT_MS')),
    ...optional('maxTimeoutMs', envGiven(env, 'GATEWAY_MAX_TIMEOUT_MS')),
    ...optional('maxConcurrentCalls', envGiven(env, 'GATEWAY_MAX_CONCURRENT_CALLS')),
    ...optional('maxSessions', envGiven(env, 'GATEWAY_MAX_SESSIONS')),
    ...authFromEnv(env),
    ...optional('allowedHosts', envGiven(env, 'GATEWAY_ALLOWED_HOSTS')),
    ...optional('allowedOrigins', envGiven(env, 'GATEWAY_ALLOWED_ORIGINS')),
    ...optional('requestTimeoutMs', envGiven(env, 'GATEWAY_REQUEST_TIMEOUT_MS')),
    ...optional('headersTimeoutMs', envGiven(env, 'GATEWAY_HEADERS_TIMEOUT_MS')),
    ...optional('maxSessionsPerToken', envGiven(env, 'GATEWAY_MAX_SESSIONS_PER_TOKEN')),
    ...optional('maxSessionsPerIp', envGiven(env, 'GATEWAY_MAX_SESSIONS_PER_IP')),
    ...optional('sessionInitTimeoutMs', envGiven(env, 'GATEWAY_SESSION_INIT_TIMEOUT_MS')),
    ...optional('maxSessionOutputBytes', envGiven(env, 'GATEWAY_MAX_SESSION_OUTPUT_BYTES')),
    ...optional('allowMethods', envGiven(env, 'GATEWAY_ALLOW_METHODS')),
    ...optional('console', consoleFromEnv(env)),
    ...optional('rateLimit', rateLimitFromEnv(env)),
    ...optional('rabbitmqManagement', managementFromEnv(env, envGiven(env, 'AMQP_URL')?.[0])),
    ...optional('redisUrl', envGiven(env, 'REDIS_URL')),
    ...optional('keyPrefix', envGiven(env, 'WARREN_KEY_PREFIX')),
  };
}

function optional<K extends string, V>(key: K, v: V | undefined): Partial<Record<K, V>> {
  return v === undefined ? {} : ({ [key]: v } as Record<K, V>);
}

/** The per-IP and per-token buckets; a burst without its rate is refused (it would silently do nothing). */
function rateLimitFromEnv(env: BrokerEnv): RateLimitOptions | undefined {
  const bucket = (perSecName: 'GATEWAY_RATE_LIMIT_PER_SEC' | 'GATEWAY_TOKEN_RATE_LIMIT_PER_SEC', burstName: 'GATEWAY_RATE_LIMIT_BURST' | 'GATEWAY_TOKEN_RATE_LIMIT_BURST'): BucketSpec | undefined => {
    const perSec = envGiven(env, perSecName);
    const burst = envGiven(env, burstName);
    if (perSec === undefined) {
      if (burst !== undefined) throw new RangeError(`${burstName} needs ${perSecName}`);
      return undefined;
    }
    return burst === undefined ? { perSec } : { perSec, burst };
  };
  const perIp = bucket('GATEWAY_RATE_LIMIT_PER_SEC', 'GATEWAY_RATE_LIMIT_BURST');
  const perToken = bucket('GATEWAY_TOKEN_RATE_LIMIT_PER_SEC', 'GATEWAY_TOKEN_RATE_LIMIT_BURST');
  const maxKeys = envGiven(env, 'GATEWAY_RATE_LIMIT_MAX_KEYS');
  if (perIp === undefined && perToken === undefined) return undefined;
  return { ...optional('perIp', perIp), ...optional('perToken', perToken), ...optional('maxKeys', maxKeys) };
}

/** The console's settings the environment may give (the rest keep ConsoleOptions' defaults). */
function consoleFromEnv(env: BrokerEnv): ConsoleOptions | undefined {
  const maxBufferedBytes = envGiven(env, 'CONSOLE_FEED_BUFFER_BYTES');
  return maxBufferedBytes === undefined ? undefined : { maxBufferedBytes };
}

/** The management API from RABBITMQ_MANAGEMENT_URL, on the virtual host of the (first) AMQP URL. */
function managementFromEnv(env: BrokerEnv, amqpUrl: string | undefined): ManagementApi | undefined {
  const url = envGiven(env, 'RABBITMQ_MANAGEMENT_URL');
  if (url === undefined) return undefined;
  const path = amqpUrl !== undefined && URL.canParse(amqpUrl) ? new URL(amqpUrl).pathname.slice(1) : '';
  return { url, vhost: path === '' ? '/' : decodeURIComponent(path) };
}

/**
 * Auth from the environment, strictly: auth is off only with GATEWAY_AUTH=none. The token variables
 * parse strictly in the schema (set but empty is an error, not "no auth"); here, the two modes.
 */
function authFromEnv(env: BrokerEnv): { auth: 'none' } | { auth: 'token'; tokens: TokenSpec[] } {
  const mode = envGiven(env, 'GATEWAY_AUTH');
  const client = envGiven(env, 'GATEWAY_TOKENS') ?? [];
  const operator = envGiven(env, 'GATEWAY_OPERATOR_TOKENS') ?? [];
  const all: TokenSpec[] = [...client.map((token) => ({ token })), ...operator.map((token) => ({ token, operator: true }))];
  if (mode === 'none') {
    if (all.length > 0) throw new RangeError('GATEWAY_AUTH=none, but GATEWAY_TOKENS or GATEWAY_OPERATOR_TOKENS is set too: choose one');
    return { auth: 'none' };
  }
  if (all.length === 0) throw new RangeError('No auth is configured: set GATEWAY_TOKENS (and/or GATEWAY_OPERATOR_TOKENS), or GATEWAY_AUTH=none to run without auth on purpose');
  return { auth: 'token', tokens: all };
}
