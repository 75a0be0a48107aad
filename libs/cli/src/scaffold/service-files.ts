// The files `warren new service NAME` writes: a service package in the shape of the example
// services (service.ts what it is, main.ts where it connects and starts tracing, a test over the in-memory broker),
// ready to run and passing its test as written. Pure: names in, file texts out.

/** A package's files by path relative to its directory. */
export type Files = ReadonlyMap<string, string>;

/** `report-writer` → `reportWriter`: the prefix of the identifiers in the scaffolded code. */
export function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** The dependency ranges of the example services, so a scaffolded package resolves to the same workspace copies. */
const typeboxRange = '^0.34.52';
const warrenRange = '^0.1.0';

function packageJson(name: string): string {
  const pkg = {
    name: `@warren/service-${name}`,
    version: '0.1.0',
    private: true,
    license: 'MIT',
    description: `The ${name} Warren service.`,
    main: 'dist/main.js',
    files: ['dist'],
    scripts: {
      build: 'tsc -b',
      start: 'node dist/main.js',
      // The repository's jest config (TypeScript through swc, @warren/* mapped to their sources), this package's tests only.
      test: `jest -c ../../jest.config.js services/${name}/ --selectProjects unit`,
    },
    dependencies: { '@sinclair/typebox': typeboxRange, '@warren/amqp': warrenRange, '@warren/inflight': warrenRange, '@warren/jsonrpc': warrenRange, '@warren/logger': warrenRange, '@warren/tracing-node': warrenRange },
    // Only the test's in-memory broker.
    devDependencies: { '@warren/amqp-transport': warrenRange },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

const tsconfig = `{
  "extends": "../../tsconfig.base.json",
  "compilerOptions": { "rootDir": "src", "outDir": "dist", "composite": true },
  "include": ["src"],
  "references": [{ "path": "../../libs/jsonrpc" }, { "path": "../../libs/logger" }, { "path": "../../libs/amqp" }, { "path": "../../libs/tracing-node" }, { "path": "../../libs/inflight" }]
}
`;

function serviceTs(name: string, id: string): string {
  return `// What the ${name} service is, apart from where it connects: its methods and the options its
// main (RabbitMQ) passes to startService. Tests start the same service over the in-memory broker.
import { Type } from '@sinclair/typebox';
import { defineMethod, type CallTracker, type ServiceEnv, type ServiceOptions, type ServiceMethod } from '@warren/amqp';
import type { Logger } from '@warren/logger';

export const ${id}Defaults = { name: '${name}', prefetch: 16 } as const;

/**
 * \`${name}.greet {name}\` → "Hello, <name>!". The TypeBox schemas are the JSON Schemas the runtime
 * checks params against (a bad call answers -32602) and discovery announces, and they type the
 * handler: \`p.name\` is a string, no cast.
 */
export const greet = defineMethod(
  {
    description: 'Greets someone: {name} → "Hello, <name>!".',
    params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
    result: Type.String(),
  },
  (p) => \`Hello, \${p.name}!\`,
);

export const ${id}Methods: Record<string, ServiceMethod> = { '${name}.greet': greet };

/** The startService options of the ${name} service; \`tracker\` is optional (with one, \`warren inflight\` sees its calls). */
export function ${id}Service(config: Pick<ServiceEnv, 'namespace' | 'name' | 'prefetch' | 'instanceId'>, deps: { readonly logger: Logger; readonly tracker?: CallTracker }): ServiceOptions {
  return {
    namespace: config.namespace,
    name: config.name,
    prefetch: config.prefetch,
    methods: ${id}Methods,
    metadata: { description: 'The ${name} service', version: '0.1.0' },
    logger: deps.logger,
    ...(deps.tracker === undefined ? {} : { tracker: deps.tracker }),
    ...(config.instanceId === undefined ? {} : { instanceId: config.instanceId }),
  };
}
`;
}

function mainTs(name: string, id: string): string {
  return `// The ${name} service's composition root: the only place that reads the environment
// (docs/services.md has the variables), connects, and turns SIGTERM/SIGINT into a graceful close.
//
// Run: node --require tsx/cjs services/${name}/src/main.ts   (AMQP_URL, REDIS_URL, WARREN_NAMESPACE as for every service)
// (tsx's require hook: unlike npx tsx or --import tsx, no loader thread a late-loaded module could block on.)
import { asUser, readMainSettings, readServiceEnv, runServiceMain, startService, type RunningService, type StartHooks } from '@warren/amqp';
import { RedisDirectory, createRedisTracker } from '@warren/inflight';
import { redactUrl, type Logger } from '@warren/logger';
import { startTracing } from '@warren/tracing-node';
import { ${id}Defaults, ${id}Service } from './service';

const settings = readMainSettings(${id}Defaults.name, () => readServiceEnv(process.env, ${id}Defaults));
if (!settings.ok) {
  // A variable that does not parse: one line naming it, no stack (the broker's way).
  process.stderr.write(settings.line);
  process.exit(1);
}
const config = settings.value;

async function start(log: Logger, { observer }: StartHooks): Promise<RunningService> {
  // With REDIS_URL: calls are tracked (warren inflight, status, cancel) and the methods recorded in the directory.
  const tracker = config.redisUrl === undefined ? undefined : createRedisTracker({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  const directory = config.redisUrl === undefined ? undefined : new RedisDirectory({ redis: config.redisUrl, keyPrefix: config.keyPrefix, logger: log });
  const service = await startService({ urls: config.amqpUrls, ...asUser(${id}Service(config, { logger: log, ...(tracker === undefined ? {} : { tracker }) }), config.userId), ...(directory === undefined ? {} : { directory }), ...(observer === undefined ? {} : { observer }) });
  log.info({ amqp: config.amqpUrls.map(redactUrl), tracking: tracker?.state ?? 'off', namespace: config.namespace, instanceId: service.instanceId }, 'service ready');
  return { ready: () => service.ready, metrics: { running: () => service.stats().running, tracking: () => tracker?.report?.() }, close: () => service.close().then(() => directory?.close()) };
}

// Spans only when OTEL_TRACES_EXPORTER asks (console, otlp: docs/observability.md), as in every Warren
// process; started before the service, flushed before the exit below.
const tracing = startTracing(process.env, { serviceName: config.name });
// runServiceMain owns the logger, the signals and the graceful close; only this line exits.
void runServiceMain({ name: config.name, logLevel: config.logLevel, ops: config.ops, start, shutdownTimeoutMs: config.shutdownTimeoutMs, ...(config.supervised ? { supervisor: process.stdin } : {}) }).then(async (code) => {
  await tracing.shutdown();
  process.exit(code);
});
`;
}

function testTs(name: string, id: string): string {
  return `// The ${name} service over the in-memory broker (@warren/amqp-transport's MemoryBroker): the real service
// and a real client, no RabbitMQ needed. Run: npm test (in this package).
import { connectClient, startService, type RpcClient, type WarrenService } from '@warren/amqp';
import { MemoryBroker } from '@warren/amqp-transport';
import { ErrorCode, JsonRpcError } from '@warren/jsonrpc';
import { silentLogger } from '@warren/logger';
import { ${id}Defaults, ${id}Service } from '../src/service';

let bus: MemoryBroker;
let service: WarrenService;
let client: RpcClient;

beforeAll(async () => {
  bus = new MemoryBroker();
  service = await startService({ connection: bus.connect(), ...${id}Service({ namespace: 'test', name: ${id}Defaults.name, prefetch: ${id}Defaults.prefetch, instanceId: undefined }, { logger: silentLogger() }) });
  client = await connectClient({ connection: bus.connect(), namespace: 'test', defaultTimeoutMs: 5000 });
});
afterAll(async () => {
  await client?.close();
  await service?.close();
  await bus?.close();
});

it('answers ${name}.greet', async () => {
  await expect(client.call('${name}.greet', { name: 'Ada' })).resolves.toBe('Hello, Ada!');
});

it('answers -32602 to params its schema refuses', async () => {
  const error = await client.call('${name}.greet', { name: '' }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(JsonRpcError);
  expect((error as JsonRpcError).code).toBe(ErrorCode.InvalidParams);
});
`;
}

function readme(name: string): string {
  return `# @warren/service-${name}

A Warren service, scaffolded by \`warren new service ${name}\`. Files: \`src/service.ts\` (its methods,
declared with TypeBox schemas through \`defineMethod\`, and its \`startService\` options),
\`src/main.ts\` (the composition root: environment, connection, signals), \`test/service.test.ts\`
(the service and a client over the in-memory broker).

\`\`\`sh
npm install                                  # once: links this package into the workspace
npm test -w services/${name}                 # its tests, no RabbitMQ needed
node --require tsx/cjs services/${name}/src/main.ts   # run it (AMQP_URL, REDIS_URL, WARREN_NAMESPACE)
npx warren call ${name}.greet '{"name":"Ada"}'   # "Hello, Ada!"
npx warren repl                              # then: ${name}.greet name=Ada
\`\`\`

Configuration (every service's variables): [docs/services.md](../../docs/services.md). Traces: with
\`OTEL_TRACES_EXPORTER=console\` (or \`otlp\` and the usual \`OTEL_*\` variables) \`main.ts\` prints or
exports a span for every call it serves ([docs/observability.md](../../docs/observability.md)).

| error | when |
|---|---|
| -32602 Invalid params | \`${name}.greet\` without a non-empty \`name\`, or with other fields |
`;
}

/** Every file of the package `services/<name>`, by path inside it. */
export function serviceFiles(name: string): Files {
  const id = camelCase(name);
  return new Map([
    ['package.json', packageJson(name)],
    ['tsconfig.json', tsconfig],
    ['README.md', readme(name)],
    ['src/service.ts', serviceTs(name, id)],
    ['src/main.ts', mainTs(name, id)],
    ['test/service.test.ts', testTs(name, id)],
  ]);
}
