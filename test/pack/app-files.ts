// The files of the fresh project test/pack/pack.test.ts installs the packed tarballs into: plain
// CommonJS and one TypeScript consumer, written as a user would, requiring `@warren/*` by name so
// that only what the tarballs ship (their `exports`, dist/ and dependencies) is used.

/** A calculator service on the namespace given in WARREN_NAMESPACE; prints `ready`, stops on SIGTERM. */
export const serveCjs = `'use strict';
const { startService } = require('@warren/amqp');
(async () => {
  const service = await startService({
    urls: process.env.AMQP_URL,
    namespace: process.env.WARREN_NAMESPACE,
    name: 'calc',
    methods: { add: { params: { type: 'array', items: { type: 'number' } }, handler: ([a, b]) => a + b } },
  });
  process.once('SIGTERM', () => service.close().then(() => process.exit(0), () => process.exit(1)));
  console.log('ready');
})().catch((err) => { console.error(err); process.exit(1); });
`;

/** One call through a client of the installed @warren/amqp; prints the result as JSON. */
export const callCjs = `'use strict';
const { connectClient } = require('@warren/amqp');
(async () => {
  const client = await connectClient({ urls: process.env.AMQP_URL, namespace: process.env.WARREN_NAMESPACE });
  try {
    console.log(JSON.stringify(await client.call('add', [4, 5])));
  } finally {
    await client.close();
  }
})().catch((err) => { console.error(err); process.exit(1); });
`;

/** Type-checked against the installed declarations through each package's \`exports\` map. */
export const consumerTs = `import { connectClient, startService } from '@warren/amqp';
import { MemoryBroker } from '@warren/amqp-transport';
import { startBroker } from '@warren/broker';
import { createLogger } from '@warren/logger';
import { decode } from '@warren/jsonrpc';
export type Surface = [typeof connectClient, typeof startService, typeof MemoryBroker, typeof startBroker, typeof createLogger, typeof decode];
`;

export const tsconfigJson = JSON.stringify({
  compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
  files: ['consumer.ts'],
});
