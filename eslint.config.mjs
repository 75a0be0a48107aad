// Which drivers each package may import is enforced here (the order of the packages and of their folders,
// and the absence of import circles, by dependency-cruiser: .dependency-cruiser.cjs). The JSON-RPC core does
// no I/O; only the AMQP transport package (libs/amqp-transport/src, not its contract.ts or memory/) imports
// amqplib; only the Redis stores import ioredis (the in-flight store, the event log, the schedules' redis-store.ts)
// and @warren/redis, which makes their clients (command timeouts a blocked event loop cannot fake); only the
// logger factory imports pino; only the mains start an OpenTelemetry SDK (@warren/tracing-node), the libraries
// speak @opentelemetry/api alone.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The OpenTelemetry SDK: a main's choice (through @warren/tracing-node), never a library's. */
const sdk = ['@warren/tracing-node', '@opentelemetry/sdk-node', '@opentelemetry/sdk-trace'];
const io = (except) => ['amqplib', 'ioredis', 'pino', 'node:net', 'node:http', 'node:fs', 'net', 'http', 'fs', ...sdk].filter((m) => !except.includes(m));
const restrict = (names, message) => ({
  'no-restricted-imports': ['error', { paths: names.map((name) => ({ name, message })) }],
});

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  // Everywhere first (the rules below replace this one for their files, each still refusing amqplib): only
  // @warren/amqp-transport imports amqplib. Tests, the bench and scripts (last rule) may, as a foreign client.
  { files: ['**/*.ts', '**/*.tsx'], rules: restrict(['amqplib'], 'Only @warren/amqp-transport imports amqplib; use its WireConnection.') },
  { files: ['libs/jsonrpc/src/**/*.ts'], rules: restrict(io([]), 'The JSON-RPC core knows no transport and does no I/O.') },
  { files: ['libs/amqp/src/**/*.ts'], rules: restrict(io([]), 'The AMQP library speaks AMQP through @warren/amqp-transport\'s contract; only that package imports amqplib. Pass a logger in, keep Redis behind the CallTracker port.') },
  // A service process's ops port (/healthz, /readyz): the one file of the library that serves HTTP.
  { files: ['libs/amqp/src/runtime/ops-server.ts'], rules: restrict(io(['node:http', 'node:net']), 'The ops server only serves HTTP probes.') },
  // The transport package: the one place amqplib is imported (its contract.ts, index.ts and memory/ stay driver-free).
  { files: ['libs/amqp-transport/src/**/*.ts'], rules: restrict(io([]), 'The contract and the in-memory broker are driver-free; only the amqplib connection (connection.ts, close.ts) imports amqplib.') },
  { files: ['libs/amqp-transport/src/*.ts'], ignores: ['libs/amqp-transport/src/contract.ts', 'libs/amqp-transport/src/index.ts'], rules: restrict(io(['amqplib']), 'The amqplib transport only speaks AMQP.') },
  { files: ['libs/logger/src/**/*.ts'], rules: restrict(io(['pino']), 'The logger factory only wraps pino.') },
  { files: ['libs/redis/src/**/*.ts'], rules: restrict(io(['ioredis']), 'The Redis client setup only speaks Redis.') },
  { files: ['libs/inflight/src/**/*.ts'], rules: restrict(io(['ioredis']), 'The in-flight store only speaks Redis.') },
  { files: ['libs/eventlog/src/**/*.ts'], rules: restrict(io(['ioredis']), 'The event log only speaks Redis.') },
  { files: ['libs/tracing-node/src/**/*.ts'], rules: restrict(io(['@opentelemetry/sdk-node']), 'The mains\' tracing only starts the Node SDK.') },
  // The schedules: only the Redis store (redis-store.ts) speaks Redis; the rest goes through the ScheduleStore port.
  { files: ['libs/schedules/src/**/*.ts'], ignores: ['libs/schedules/src/redis-store.ts'], rules: restrict(io([]), 'Schedules reach Redis through the ScheduleStore port (redis-store.ts).') },
  { files: ['libs/schedules/src/redis-store.ts'], rules: restrict(io(['ioredis']), 'The schedule store only speaks Redis.') },
  { files: ['services/**/*.ts', 'broker/**/*.ts'], rules: restrict(['amqplib', 'ioredis', ...sdk], 'Services and the broker use the Warren libraries, not the drivers; only their main.ts starts an OpenTelemetry SDK.') },
  // The console's browser code reads the server's shapes as types only (types.ts): a value import would pull server code into the bundle.
  {
    files: ['broker/console/src/**/*.ts', 'broker/console/src/**/*.tsx'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ group: ['@warren/*', '**/src/*', '!./*', '!../*'], allowTypeImports: true, message: 'The console imports the server\'s types only (import type): its bundle holds no server code.' }],
      }],
    },
  },
  { files: ['**/test/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', '**/main.ts', '**/bin/**/*.ts'], rules: { 'no-console': 'off', 'no-restricted-imports': 'off' } },
);
