import type { BrokerOptions } from './broker';
import { rateLimitDefaults, type BucketSpec, type RateLimitOptions } from './http/rate-limit';
import { gatewayDefaults, type TokenSpec } from './options';
import type { ManagementApi } from './queue-stats';

/** The environment variables the broker reads, with their defaults; docs/gateway.md has the same table. */
export const brokerEnv = {
  AMQP_URL: 'RabbitMQ URL(s), comma-separated for a cluster. Default amqp://guest:guest@127.0.0.1:5672',
  WARREN_NAMESPACE: 'Namespace of exchanges and queues. Default warren',
  AMQP_USER_ID: "The RabbitMQ user of AMQP_URL when each process has its own (docs/security.md): stamped on the broker service's replies, and the start of its reply queues' names. Default unset",
  GATEWAY_HOST: `Interface to listen on. Default ${gatewayDefaults.host}`,
  GATEWAY_PORT: `Port to listen on. Default ${gatewayDefaults.port}`,
  GATEWAY_BODY_LIMIT_BYTES: `Largest request body. Default ${gatewayDefaults.bodyLimitBytes}`,
  GATEWAY_DEFAULT_TIMEOUT_MS: `Deadline of calls without X-Timeout-Ms. Default ${gatewayDefaults.defaultTimeoutMs}`,
  GATEWAY_MAX_TIMEOUT_MS: `Ceiling on X-Timeout-Ms. Default ${gatewayDefaults.maxTimeoutMs}`,
  GATEWAY_MAX_CONCURRENT_CALLS: `Calls relayed at once before answering Overloaded. Default ${gatewayDefaults.maxConcurrentCalls}`,
  GATEWAY_MAX_SESSIONS: `Open MCP sessions. Default ${gatewayDefaults.maxSessions}`,
  GATEWAY_AUTH: "'none' runs without auth (required to start without tokens); 'token' (the default) needs GATEWAY_TOKENS or GATEWAY_OPERATOR_TOKENS",
  GATEWAY_TOKENS: 'Accepted client bearer tokens, comma-separated (each sees only its own calls in /inflight); set but empty or with an empty entry refuses to start',
  GATEWAY_OPERATOR_TOKENS: 'Accepted operator bearer tokens, comma-separated (see every call in /inflight)',
  GATEWAY_ALLOWED_HOSTS: 'Host names the Host header may name, comma-separated (* any, *.example.com subdomains). Default: loopback names on a loopback bind, else any',
  GATEWAY_ALLOWED_ORIGINS: "Origins browser pages may call from, comma-separated, besides the gateway's own (* any). Default none",
  GATEWAY_REQUEST_TIMEOUT_MS: `Time to send headers and body before 408. Default ${gatewayDefaults.requestTimeoutMs}`,
  GATEWAY_HEADERS_TIMEOUT_MS: `Time to send headers before 408. Default ${gatewayDefaults.headersTimeoutMs}`,
  GATEWAY_MAX_SESSIONS_PER_TOKEN: `Open MCP sessions per bearer token (one more reclaims its oldest idle one). Default ${gatewayDefaults.maxSessionsPerToken}`,
  GATEWAY_MAX_SESSIONS_PER_IP: `Open MCP sessions per client address, without auth. Default ${gatewayDefaults.maxSessionsPerIp}`,
  GATEWAY_SESSION_INIT_TIMEOUT_MS: `Time an MCP session gets to complete initialize. Default ${gatewayDefaults.sessionInitTimeoutMs}`,
  GATEWAY_MAX_SESSION_OUTPUT_BYTES: `Bytes an MCP session may have queued for a client that does not read. Default ${gatewayDefaults.maxSessionOutputBytes}`,
  GATEWAY_ALLOW_METHODS: 'Methods exposed, comma-separated (a trailing * matches a prefix); unset exposes all',
  GATEWAY_RATE_LIMIT_PER_SEC: 'Requests per second each client IP may make, sustained (fractions allowed); unset: no per-IP limit',
  GATEWAY_RATE_LIMIT_BURST: 'Requests a client IP may make at once after a quiet spell. Default: GATEWAY_RATE_LIMIT_PER_SEC rounded up',
  GATEWAY_TOKEN_RATE_LIMIT_PER_SEC: 'Requests per second each bearer token may make, sustained; unset: no per-token limit',
  GATEWAY_TOKEN_RATE_LIMIT_BURST: 'Requests a bearer token may make at once. Default: GATEWAY_TOKEN_RATE_LIMIT_PER_SEC rounded up',
  GATEWAY_RATE_LIMIT_MAX_KEYS: `Client IPs whose buckets are kept at once (least recently seen forgotten first). Default ${rateLimitDefaults.maxKeys}`,
  RABBITMQ_MANAGEMENT_URL: "RabbitMQ management API (http://user:password@host:15672) for the queue figures: unacked, rates, delay queues; the vhost is AMQP_URL's. Unset: passive declares over AMQP (ready, consumers, dead letters only)",
  REDIS_URL: 'Redis of the in-flight view (GET /inflight, inflight.* methods, $/cancelRequest) whose state /readyz reports (not required for readiness); unset: none',
  SCHEDULER: 'on: this broker runs a scheduler (with REDIS_URL; of several brokers, the one holding the lease fires); off: it serves schedule.* only. Default on',
  WARREN_KEY_PREFIX: 'Prefix of the in-flight keys in Redis; services and the CLI must use the same. Default: the namespace',
  LOG_LEVEL: 'pino level. Default info',
} as const;

export type BrokerEnv = Readonly<Partial<Record<keyof typeof brokerEnv | string, string | undefined>>>;

/**
 * Reads broker options from an environment (main passes process.env; no
 * other module reads it). Empty variables count as unset; a malformed number
 * names its variable.
 */
export function brokerOptionsFromEnv(env: BrokerEnv): BrokerOptions & { urls: string[]; redisUrl?: string; keyPrefix?: string; logLevel: string; scheduler: boolean } {
  const int = (name: keyof typeof brokerEnv): number | undefined => {
    const text = value(env, name);
    if (text === undefined) return undefined;
    if (!/^\d+$/.test(text)) throw new RangeError(`${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
    return Number(text);
  };
  const rate = (name: keyof typeof brokerEnv): number | undefined => {
    const text = value(env, name);
    if (text === undefined) return undefined;
    if (!/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0) throw new RangeError(`${name} must be a positive number, got ${JSON.stringify(text)}`);
    return Number(text);
  };
  const bucket = (perSecName: keyof typeof brokerEnv, burstName: keyof typeof brokerEnv): BucketSpec | undefined => {
    const perSec = rate(perSecName);
    const burst = int(burstName);
    if (perSec === undefined) {
      if (burst !== undefined) throw new RangeError(`${burstName} needs ${perSecName}`);
      return undefined;
    }
    return burst === undefined ? { perSec } : { perSec, burst };
  };
  const perIp = bucket('GATEWAY_RATE_LIMIT_PER_SEC', 'GATEWAY_RATE_LIMIT_BURST');
  const perToken = bucket('GATEWAY_TOKEN_RATE_LIMIT_PER_SEC', 'GATEWAY_TOKEN_RATE_LIMIT_BURST');
  const maxKeys = int('GATEWAY_RATE_LIMIT_MAX_KEYS');
  const rateLimit: RateLimitOptions | undefined = perIp === undefined && perToken === undefined
    ? undefined
    : { ...(perIp === undefined ? {} : { perIp }), ...(perToken === undefined ? {} : { perToken }), ...(maxKeys === undefined ? {} : { maxKeys }) };
  const list = (name: keyof typeof brokerEnv): string[] | undefined => value(env, name)?.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  const auth = authFromEnv(env);
  const optional = <K extends string, V>(key: K, v: V | undefined): Partial<Record<K, V>> => (v === undefined ? {} : ({ [key]: v } as Record<K, V>));
  const redisUrl = value(env, 'REDIS_URL');
  const scheduler = value(env, 'SCHEDULER') ?? 'on';
  if (scheduler !== 'on' && scheduler !== 'off') throw new RangeError(`SCHEDULER must be "on" or "off", got ${JSON.stringify(scheduler)}`);
  return {
    scheduler: scheduler === 'on',
    urls: list('AMQP_URL') ?? ['amqp://guest:guest@127.0.0.1:5672'],
    logLevel: value(env, 'LOG_LEVEL') ?? 'info',
    ...optional('namespace', value(env, 'WARREN_NAMESPACE')),
    ...optional('userId', value(env, 'AMQP_USER_ID')),
    ...optional('host', value(env, 'GATEWAY_HOST')),
    ...optional('port', int('GATEWAY_PORT')),
    ...optional('bodyLimitBytes', int('GATEWAY_BODY_LIMIT_BYTES')),
    ...optional('defaultTimeoutMs', int('GATEWAY_DEFAULT_TIMEOUT_MS')),
    ...optional('maxTimeoutMs', int('GATEWAY_MAX_TIMEOUT_MS')),
    ...optional('maxConcurrentCalls', int('GATEWAY_MAX_CONCURRENT_CALLS')),
    ...optional('maxSessions', int('GATEWAY_MAX_SESSIONS')),
    ...auth,
    ...optional('allowedHosts', list('GATEWAY_ALLOWED_HOSTS')),
    ...optional('allowedOrigins', list('GATEWAY_ALLOWED_ORIGINS')),
    ...optional('requestTimeoutMs', int('GATEWAY_REQUEST_TIMEOUT_MS')),
    ...optional('headersTimeoutMs', int('GATEWAY_HEADERS_TIMEOUT_MS')),
    ...optional('maxSessionsPerToken', int('GATEWAY_MAX_SESSIONS_PER_TOKEN')),
    ...optional('maxSessionsPerIp', int('GATEWAY_MAX_SESSIONS_PER_IP')),
    ...optional('sessionInitTimeoutMs', int('GATEWAY_SESSION_INIT_TIMEOUT_MS')),
    ...optional('maxSessionOutputBytes', int('GATEWAY_MAX_SESSION_OUTPUT_BYTES')),
    ...optional('allowMethods', list('GATEWAY_ALLOW_METHODS')),
    ...optional('rateLimit', rateLimit),
    ...optional('rabbitmqManagement', managementFromEnv(env, list('AMQP_URL')?.[0])),
    ...optional('redisUrl', redisUrl),
    ...optional('keyPrefix', value(env, 'WARREN_KEY_PREFIX')),
  };
}

/** The management API from RABBITMQ_MANAGEMENT_URL, on the virtual host of the (first) AMQP URL. */
function managementFromEnv(env: BrokerEnv, amqpUrl: string | undefined): ManagementApi | undefined {
  const url = value(env, 'RABBITMQ_MANAGEMENT_URL');
  if (url === undefined) return undefined;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new RangeError('RABBITMQ_MANAGEMENT_URL must be an http(s) URL');
  const path = amqpUrl !== undefined && URL.canParse(amqpUrl) ? new URL(amqpUrl).pathname.slice(1) : '';
  return { url, vhost: path === '' ? '/' : decodeURIComponent(path) };
}

/**
 * Auth from the environment, strictly: auth is off only with GATEWAY_AUTH=none. A token variable that is
 * set must hold tokens (`GATEWAY_TOKENS=""` or `","` from a broken template would otherwise mean "no auth"),
 * and each entry must be a token (no empty entries, no whitespace inside one).
 */
function authFromEnv(env: BrokerEnv): { auth: 'none' } | { auth: 'token'; tokens: TokenSpec[] } {
  const mode = value(env, 'GATEWAY_AUTH');
  if (mode !== undefined && mode !== 'none' && mode !== 'token') throw new RangeError(`GATEWAY_AUTH must be "none" or "token", got ${JSON.stringify(mode)}`);
  const tokens = (name: 'GATEWAY_TOKENS' | 'GATEWAY_OPERATOR_TOKENS'): string[] | undefined => {
    const raw = env[name];
    if (raw === undefined) return undefined;
    const items = raw.split(',').map((t) => t.trim());
    if (items.every((t) => t.length === 0)) throw new RangeError(`${name} is set but holds no token (got ${JSON.stringify(raw)}); give tokens, or unset it and set GATEWAY_AUTH=none to run without auth`);
    if (items.some((t) => t.length === 0)) throw new RangeError(`${name} has an empty entry (got a stray comma); list tokens separated by single commas`);
    if (items.some((t) => /\s/.test(t))) throw new RangeError(`${name} has an entry with whitespace inside; tokens are sent as "Authorization: Bearer <token>" and cannot hold spaces`);
    return items;
  };
  const client = tokens('GATEWAY_TOKENS') ?? [];
  const operator = tokens('GATEWAY_OPERATOR_TOKENS') ?? [];
  const all: TokenSpec[] = [...client.map((token) => ({ token })), ...operator.map((token) => ({ token, operator: true }))];
  if (mode === 'none') {
    if (all.length > 0) throw new RangeError('GATEWAY_AUTH=none, but GATEWAY_TOKENS or GATEWAY_OPERATOR_TOKENS is set too: choose one');
    return { auth: 'none' };
  }
  if (all.length === 0) throw new RangeError('No auth is configured: set GATEWAY_TOKENS (and/or GATEWAY_OPERATOR_TOKENS), or GATEWAY_AUTH=none to run without auth on purpose');
  return { auth: 'token', tokens: all };
}

function value(env: BrokerEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v.length === 0 ? undefined : v;
}
