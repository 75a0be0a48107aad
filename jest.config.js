// Four projects: `unit` (pure, in-memory and embedded tests) needs nothing running; `integration` and
// `browser` talk to the real RabbitMQ and Redis named by AMQP_URL / REDIS_URL; `browser` and
// `browser-embedded` drive Debian's Chromium. `npx jest` runs them all; `npm test` (scripts/test.ts)
// runs those this machine can, naming the others (scripts/test-tiers.ts lists each project's needs).
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] };
// The broker and the example services are packages too (embedded mode imports their entry points);
// listed before the libraries' rule, which would match them first.
const moduleNameMapper = {
  '^@warren/broker$': '<rootDir>/broker/src/index.ts',
  '^@warren/service-([a-z-]+)$': '<rootDir>/services/$1/src/index.ts',
  '^@warren/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
};
const common = { transform, moduleNameMapper, testEnvironment: 'node', rootDir: __dirname };

/** @type {import('jest').Config} */
module.exports = {
  // Integration tests wait on real brokers; per-project testTimeout is ignored by jest, so it is set here.
  testTimeout: 30000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{libs,services,broker}/**/test/**/*.test.ts', '<rootDir>/test/unit/**/*.test.ts'], testPathIgnorePatterns: ['\\.int\\.test\\.ts$', '/node_modules/'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services,broker}/**/test/**/*.int.test.ts', '<rootDir>/test/integration/**/*.int.test.ts'],
      // RabbitMQ and Redis from AMQP_URL/REDIS_URL, the default ports, or testcontainers (see the file).
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
    },
    {
      ...common,
      // The web console in headless Chromium (Debian's chromium package, driven by playwright-core).
      displayName: 'browser',
      testMatch: ['<rootDir>/test/browser/**/*.browser.test.ts'],
      testPathIgnorePatterns: ['\\.embedded\\.browser\\.test\\.ts$', '/node_modules/'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
    },
    // The console in Chromium against the embedded system: Chromium, and nothing running.
    { ...common, displayName: 'browser-embedded', testMatch: ['<rootDir>/test/browser/**/*.embedded.browser.test.ts'] },
  ],
};
