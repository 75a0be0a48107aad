// Every environment variable Warren's broker, services and CLI read: one table,
// from which readers parse (env-read.ts) and docs/configuration.md is generated
// (scripts/env-docs.ts; a unit test fails when the docs are behind). The
// standard OTEL_* variables belong to the OpenTelemetry SDK (docs/observability.md),
// and npm start's own switches to scripts/ (README).
import { amqpUrlList, digits, httpUrl, list, oneOf, port, positiveInt, positiveNumber, rawText, text, tokens } from './env-kinds';
import { variable } from './env-var';

const all = ['broker', 'services', 'cli'] as const;

export const envSchema = {
  // Shared
  AMQP_URL: variable(amqpUrlList, { default: ['amqp://guest:guest@127.0.0.1:5672'], defaultText: '`amqp://guest:guest@127.0.0.1:5672`', readers: all, description: 'RabbitMQ URL(s), comma-separated for the nodes of a cluster (services then declare quorum queues, [scaling.md](scaling.md)); `amqps://` for TLS; any other scheme refuses to start' }),
  WARREN_NAMESPACE: variable(text, { default: 'warren', readers: all, description: 'prefix of every exchange and queue; callers and services must agree on it' }),
  WARREN_KEY_PREFIX: variable(text, { defaultText: 'the namespace', readers: all, description: 'prefix of every Redis key (in-flight records, directory, audit lists, job progress); broker, services and CLI must use the same' }),
  REDIS_URL: variable(text, { defaultText: 'broker, calculator: unset (no Redis); audit, jobs, CLI: `redis://127.0.0.1:6379`', readers: all, description: 'Redis of the in-flight store, the method directory, schedules and the example services\' records; the broker\'s `/readyz` reports its state (not required for readiness); `rediss://` for TLS' }),
  AMQP_USER_ID: variable(text, { readers: all, description: 'the RabbitMQ user of `AMQP_URL` when each process has its own ([security.md](security.md)): replies and progress carry it as `user_id`, and reply queues are named `NS.reply.<user>-…`' }),
  LOG_LEVEL: variable(oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), { default: 'info' as const, readers: ['broker', 'services'], description: 'pino level; any other word refuses to start, naming the variable' }),
  WARREN_SUPERVISOR: variable(text, { readers: ['broker', 'services'], description: '`stdin`: stdin is the pipe of the supervisor that started the process (`npm start` sets it); its end means the supervisor is gone, even SIGKILLed, and the process shuts down as on SIGTERM; a service an operator drained (`warren worker drain`) then exits 75, which the supervisor reads as drained, not crashed' }),

  // Services
  SERVICE_NAME: variable(text, { defaultText: '`calculator` / `audit` / `jobs`', readers: ['services'], description: 'names the service\'s queues; instances with one name share the work' }),
  INSTANCE_ID: variable(text, { defaultText: 'random', readers: ['services'], description: 'this instance\'s id in logs, discovery and the in-flight store' }),
  PREFETCH: variable(positiveInt, { defaultText: '32 (jobs: 1)', readers: ['services'], description: 'requests (or notifications) one instance runs at once' }),
  SHUTDOWN_TIMEOUT_MS: variable(positiveInt, { default: 15_000, readers: ['services'], description: 'the most a graceful shutdown may take; past it the process exits 1 and unacknowledged calls are redelivered to another instance. A watchdog thread SIGKILLs a process still there 5 s later (its main thread blocked), or SHUTDOWN_TIMEOUT_MS + 5 s after its supervisor (`npm start`) died' }),
  WARREN_OPS_PORT: variable(port, { defaultText: 'unset (off); `npm start`: 9464 up, one port per service, skipping ports already taken (another stack\'s)', readers: ['services'], description: 'the ops port: `GET /healthz`, `GET /readyz` (connected and consuming) and `GET /metrics` (Prometheus), [services.md](services.md#ops-port); a port already taken is logged and the service runs on without one' }),
  WARREN_OPS_HOST: variable(text, { default: '127.0.0.1', readers: ['services'], description: 'interface of the ops port; `0.0.0.0` only if something outside the host or container must reach it (a scraper)' }),
  AUDIT_MAX_ENTRIES: variable(positiveInt, { default: 1000, readers: ['audit'], description: 'entries kept per service (a capped list)' }),
  AUDIT_TTL_MS: variable(positiveInt, { default: 86_400_000, readers: ['audit'], description: 'the list expires this long after the last notification' }),
  JOBS_STEP_MS: variable(positiveInt, { default: 1000, readers: ['jobs'], description: 'time one unit of a job\'s `size` takes' }),
  JOBS_MAX_ATTEMPTS: variable(positiveInt, { default: 3, readers: ['jobs'], description: 'deliveries of one job that may start it; the next one is dead-lettered' }),
  JOBS_LEASE_MS: variable(positiveInt, { default: 15_000, readers: ['jobs'], description: 'how long a dead worker\'s job stays claimed before another worker takes it over' }),
  SHUTDOWN_GRACE_MS: variable(positiveInt, { default: 10_000, readers: ['jobs'], description: 'time running jobs get on SIGTERM before they are requeued' }),

  // Broker (defaults as resolveGatewayOptions fills them in; broker/test/env-schema.test.ts keeps them equal)
  GATEWAY_HOST: variable(text, { defaultText: '`127.0.0.1`', readers: ['broker'], description: 'interface to listen on' }),
  GATEWAY_PORT: variable(digits, { defaultText: '`18001`', readers: ['broker'], description: 'port (0: any free one)' }),
  GATEWAY_BODY_LIMIT_BYTES: variable(digits, { defaultText: '`1048576`', readers: ['broker'], description: 'largest request body' }),
  GATEWAY_DEFAULT_TIMEOUT_MS: variable(digits, { defaultText: '`30000`', readers: ['broker'], description: 'deadline of calls without `X-Timeout-Ms`' }),
  GATEWAY_MAX_TIMEOUT_MS: variable(digits, { defaultText: '`60000`', readers: ['broker'], description: 'ceiling on `X-Timeout-Ms`' }),
  GATEWAY_MAX_CONCURRENT_CALLS: variable(digits, { defaultText: '`1000`', readers: ['broker'], description: 'calls relayed at once before answering `-32004` (Overloaded)' }),
  GATEWAY_MAX_SESSIONS: variable(digits, { defaultText: '`1000`', readers: ['broker'], description: 'open MCP sessions' }),
  GATEWAY_AUTH: variable(oneOf(['token', 'none']), { defaultText: '`token`', readers: ['broker'], description: '`none`: no auth, on purpose (the only way to run without tokens; `npm start` sets it when no tokens are given); `token` needs `GATEWAY_TOKENS` or `GATEWAY_OPERATOR_TOKENS`' }),
  GATEWAY_TOKENS: variable(tokens, { readers: ['broker'], description: 'accepted client bearer tokens (each sees only its own calls in `/inflight`); set but empty or with an empty entry refuses to start' }),
  GATEWAY_OPERATOR_TOKENS: variable(tokens, { readers: ['broker'], description: 'accepted operator bearer tokens (see every call in `/inflight`, and the console)' }),
  GATEWAY_ALLOWED_HOSTS: variable(list, { defaultText: 'loopback names on a loopback bind, else any', readers: ['broker'], description: '`Host` names served (`*` any, `*.example.com` subdomains); others answer 403 (DNS rebinding)' }),
  GATEWAY_ALLOWED_ORIGINS: variable(list, { defaultText: 'none (own origin only)', readers: ['broker'], description: 'browser origins served besides the gateway\'s own (`*` any)' }),
  GATEWAY_REQUEST_TIMEOUT_MS: variable(digits, { defaultText: '`30000`', readers: ['broker'], description: 'time to send headers and body (408)' }),
  GATEWAY_HEADERS_TIMEOUT_MS: variable(digits, { defaultText: '`10000`', readers: ['broker'], description: 'time to send the headers (408)' }),
  GATEWAY_MAX_SESSIONS_PER_TOKEN: variable(digits, { defaultText: '`100`', readers: ['broker'], description: 'open MCP sessions per bearer token (one more reclaims its oldest idle one, else 429)' }),
  GATEWAY_MAX_SESSIONS_PER_IP: variable(digits, { defaultText: '`100`', readers: ['broker'], description: 'open MCP sessions per client address, without auth (429)' }),
  GATEWAY_SESSION_INIT_TIMEOUT_MS: variable(digits, { defaultText: '`10000`', readers: ['broker'], description: 'time an MCP session gets to complete `initialize`' }),
  GATEWAY_MAX_SESSION_OUTPUT_BYTES: variable(digits, { defaultText: '`4194304`', readers: ['broker'], description: 'bytes an MCP session may have queued for a client that does not read' }),
  GATEWAY_ALLOW_METHODS: variable(list, { defaultText: 'unset (all)', readers: ['broker'], description: 'methods exposed over HTTP (`prefix*` allowed)' }),
  GATEWAY_RATE_LIMIT_PER_SEC: variable(positiveNumber, { defaultText: 'unset (no limit)', readers: ['broker'], description: 'requests per second each client IP may make, sustained (fractions allowed)' }),
  GATEWAY_RATE_LIMIT_BURST: variable(digits, { defaultText: 'the rate, rounded up', readers: ['broker'], description: 'requests a client IP may make at once after a quiet spell (needs `GATEWAY_RATE_LIMIT_PER_SEC`)' }),
  GATEWAY_TOKEN_RATE_LIMIT_PER_SEC: variable(positiveNumber, { defaultText: 'unset (no limit)', readers: ['broker'], description: 'requests per second each bearer token may make, sustained' }),
  GATEWAY_TOKEN_RATE_LIMIT_BURST: variable(digits, { defaultText: 'the rate, rounded up', readers: ['broker'], description: 'requests a bearer token may make at once (needs `GATEWAY_TOKEN_RATE_LIMIT_PER_SEC`)' }),
  GATEWAY_RATE_LIMIT_MAX_KEYS: variable(digits, { defaultText: '`10000`', readers: ['broker'], description: 'client IPs whose buckets are kept at once (least recently seen forgotten first)' }),
  CONSOLE_FEED_BUFFER_BYTES: variable(digits, { defaultText: '`262144`', readers: ['broker'], description: 'bytes a console browser may leave unread on its live feed before it is dropped (it reconnects to a fresh list); a browser that reads slowly but steadily is waited for, not dropped ([console.md](console.md#live-feed))' }),
  RABBITMQ_MANAGEMENT_URL: variable(httpUrl, { readers: ['broker', 'cli'], description: 'the RabbitMQ management API (`http://user:password@host:15672`, on `AMQP_URL`\'s vhost) for the queue figures: unacked, rates, delay queues; unset: passive declares over AMQP (ready, consumers, dead letters only). `warren namespace rm` lists a namespace\'s queues and exchanges through it' }),
  SCHEDULER: variable(oneOf(['on', 'off']), { default: 'on', readers: ['broker'], description: '`on`: with `REDIS_URL`, this broker runs a scheduler (every broker\'s races for one lease; the holder fires, [scheduling.md](scheduling.md)); `off`: it serves `schedule.*` only' }),

  // CLI
  WARREN_GATEWAY: variable(text, { defaultText: '`http://127.0.0.1:18001` (`off` disables)', readers: ['cli'], description: 'the broker\'s HTTP gateway: `warren services`, and every command through the gateway ([cli.md](cli.md))' }),
  WARREN_VIA: variable(text, { default: 'auto', readers: ['cli'], description: '`amqp`, `gateway` (POST /rpc), or `auto`: the gateway when no AMQP URL is given and it runs embedded' }),
  WARREN_TOKEN: variable(text, { readers: ['cli'], description: 'bearer token for a gateway with auth on' }),
  WARREN_REPL_HISTORY: variable(rawText, { defaultText: '`$XDG_STATE_HOME/warren/repl_history`, else `~/.local/state/warren/repl_history`', readers: ['cli'], description: '`warren repl`: the history file; `off` or empty keeps none' }),
  NO_COLOR: variable(text, { readers: ['cli'], description: 'set: no colours' }),
  FORCE_COLOR: variable(text, { readers: ['cli'], description: 'colours even when not on a terminal; `0`: none' }),
} as const;

export type EnvName = keyof typeof envSchema;
