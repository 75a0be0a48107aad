// The house's layering, written once as rules (`npm run lint:deps`, part of `npm run lint`): no import
// circles anywhere (type-only imports count), each package's source imports only the Warren packages
// below it, and libs/amqp's and libs/amqp-transport's folders point one way. The package READMEs'
// "Layering" sections say the same in words. Which *drivers* a package may import (amqplib, ioredis,
// pino) is ESLint's fence (eslint.config.mjs).

/**
 * The Warren packages each library's `src/` may import: its package.json dependencies, read as an order
 * (config (env schema, options kernel) ← JSON-RPC core ← calls, transport ← amqp engine/runtime ← schedules ← the CLI, services and broker;
 * redis (the ioredis client setup: stall-tolerant command timeouts) ← inflight, schedules, eventlog).
 * Absent on purpose: inflight → amqp (a tracker needs no AMQP: the tracker port is @warren/calls'), and
 * any library → services, broker or scripts.
 */
const libraryImports = {
  config: [],
  jsonrpc: ['config'],
  logger: [],
  redis: [],
  eventlog: ['config', 'redis'],
  testkit: [],
  'tracing-node': [],
  calls: ['jsonrpc'],
  'amqp-transport': ['config', 'jsonrpc', 'logger'],
  amqp: ['amqp-transport', 'calls', 'config', 'jsonrpc', 'logger'],
  inflight: ['calls', 'config', 'jsonrpc', 'logger', 'redis'],
  schedules: ['amqp', 'config', 'jsonrpc', 'logger', 'redis'],
  cli: ['amqp', 'amqp-transport', 'calls', 'config', 'inflight', 'jsonrpc', 'logger'],
};

/** The composition roots (services, broker) take any library but these (test helpers, the CLI's own). */
const notForRoots = ['testkit', 'cli'];

/**
 * libs/amqp's folders, lowest first: a folder imports only folders before it (its README "Layout").
 * `dead-letters` (dead-letter queues) and `discovery` sit side by side on the engine; neither imports the other.
 */
const amqpFolders = [['wire'], ['tracing'], ['engine'], ['discovery', 'dead-letters'], ['runtime']];

const warrenPackage = '^(libs/[^/]+|services/[^/]+|broker)/';

const packageRules = Object.entries(libraryImports).map(([name, allowed]) => ({
  name: `package-order:${name}`,
  comment: `libs/${name}/src imports only ${allowed.length ? allowed.map((a) => `@warren/${a}`).join(', ') : 'no other Warren package'} (the package order)`,
  severity: 'error',
  from: { path: `^libs/${name}/src/` },
  to: { path: warrenPackage, pathNot: `^libs/(${[name, ...allowed].join('|')})/` },
}));

const amqpFolderRules = amqpFolders.flatMap((level, i) =>
  level.map((folder) => {
    const barred = [...amqpFolders.slice(i + 1).flat(), ...level.filter((other) => other !== folder)];
    return {
      name: `amqp-layer:${folder}`,
      comment: `libs/amqp/src/${folder} imports no folder above or beside it (${barred.join(', ') || 'none'}), nor the package index`,
      severity: 'error',
      from: { path: `^libs/amqp/src/${folder}/` },
      to: { path: barred.length ? `^libs/amqp/src/(${barred.join('|')})/|^libs/amqp/src/index\\.ts$` : '^libs/amqp/src/index\\.ts$' },
    };
  }),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circle, not even a type-only one: move the shared type one layer down (a small file named for what it holds).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...packageRules,
    {
      name: 'package-order:services',
      comment: 'A service imports Warren libraries (not the CLI, not test helpers), never another service or the broker',
      severity: 'error',
      from: { path: '^services/([^/]+)/src/' },
      to: { path: `^(services/(?!$1/)|broker/|libs/(${notForRoots.join('|')})/)` },
    },
    {
      name: 'package-order:broker',
      comment: 'The broker imports Warren libraries (not the CLI, not test helpers); its server never imports the console (browser code), and no service',
      severity: 'error',
      from: { path: '^broker/src/' },
      to: { path: `^(services/|broker/console/|libs/(${notForRoots.join('|')})/)` },
    },
    {
      name: 'package-order:console',
      comment: 'The console (browser code) may read the server\'s types (import type: nothing reaches the bundle), nothing that runs on Node',
      severity: 'error',
      from: { path: '^broker/console/src/' },
      to: { path: '^(libs|services|broker/src)/', dependencyTypesNot: ['type-only'] },
    },
    ...amqpFolderRules,
    {
      name: 'amqp-transport:contract',
      comment: 'contract.ts is the bottom of the transport: driver-free types that import nothing of the package',
      severity: 'error',
      from: { path: '^libs/amqp-transport/src/contract\\.ts$' },
      to: { path: '^libs/' },
    },
    {
      name: 'amqp-transport:memory',
      comment: 'The in-memory broker implements the contract without amqplib: it never imports the amqplib connection',
      severity: 'error',
      from: { path: '^libs/amqp-transport/src/memory/' },
      to: { path: '^libs/amqp-transport/src/(connection|close|backoff|index)\\.ts$' },
    },
    {
      name: 'amqp-transport:amqplib',
      comment: 'The amqplib connection knows nothing of the in-memory broker',
      severity: 'error',
      from: { path: '^libs/amqp-transport/src/[^/]+\\.ts$', pathNot: '^libs/amqp-transport/src/index\\.ts$' },
      to: { path: '^libs/amqp-transport/src/memory/|^libs/amqp-transport/src/index\\.ts$' },
    },
    {
      name: 'no-orphans',
      comment: 'A source file nothing imports and that imports nothing is dead (entry points excepted)',
      severity: 'error',
      from: {
        orphan: true,
        path: '^(libs/[^/]+|services/[^/]+|broker)/src/',
        pathNot: ['\\.d\\.ts$', '/src/index\\.ts$', '/src/main\\.ts$'],
      },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|coverage)/' },
    // Type-only imports are arrows too: a circle of types is still a circle a reader has to hold.
    tsPreCompilationDeps: true,
    // @warren/* resolve to the packages' sources (tsconfig.json "paths"), so arrows between packages are seen.
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.d.ts', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
