// The late CI stages, run by .ci/run after `npm test`, one at a time:
// `npm run test:budget` (the per-call cost budget, test/budget/), `npm run test:soak` (the short soak: worker processes killed and replaced,
// connections cut and stalled, for 20 s; and beside it test/soak/schedules.test.ts, two scheduler
// processes racing over 5 minutes of a 1-second schedule, ~5.5 min), `npm run test:cluster` (failover on
// a three-node RabbitMQ cluster of extra nodes) and then `npm run test:restart`
// (stops and starts the RabbitMQ app, so it runs last and alone); `npm run test:pack`
// (the packages packed and installed elsewhere) runs after `npm test` because it writes dist/;
// `npm run test:rmq4` runs the whole-system, example, Python and queue-rule tests again, against
// RabbitMQ 4.x. Plain `npx jest` never picks them up: test/budget/, test/soak/, test/restart/, test/cluster/,
// test/pack/ and test/rmq4/ match no project of jest.config.js.
const base = require('./jest.config.js');

const integration = base.projects.find((p) => p.displayName === 'integration');

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 180000,
  projects: [
    { ...integration, displayName: 'soak', testMatch: ['<rootDir>/test/soak/**/*.test.ts'] },
    // The per-call cost budget (test/budget/call-budget.json): counted, not timed; about a minute.
    { ...integration, displayName: 'budget', testMatch: ['<rootDir>/test/budget/**/*.test.ts'] },
    { ...integration, displayName: 'restart', testMatch: ['<rootDir>/test/restart/**/*.test.ts'] },
    // Its own RabbitMQ cluster and Redis Cluster (extra nodes on this machine); the global setup only checks the machine's own.
    { ...integration, displayName: 'cluster', testMatch: ['<rootDir>/test/cluster/**/*.test.ts'] },
    // Builds dist/, packs the publishable packages and installs them in a fresh project (test/pack/).
    { ...integration, displayName: 'pack', testMatch: ['<rootDir>/test/pack/**/*.test.ts'] },
    // The RabbitMQ 4 tier: Debian 13's RabbitMQ 4.x with 4.3's denials, booted (or found running) by its
    // global setup, which points AMQP_URL and RABBITMQCTL at it (scripts/rabbitmq4.ts); Redis is the machine's.
    {
      ...integration,
      displayName: 'rmq4',
      testMatch: [
        '<rootDir>/test/rmq4/**/*.test.ts',
        '<rootDir>/test/integration/{start,examples,python,queue-rules}.int.test.ts',
        '<rootDir>/libs/amqp-transport/test/memory-parity.int.test.ts',
      ],
      globalSetup: '<rootDir>/test/rmq4/global-setup.ts',
      globalTeardown: '<rootDir>/test/rmq4/global-teardown.ts',
    },
  ],
};
