// Writes docs/schemas/*.json from the schemas the code enforces
// (libs/amqp/src/wire/protocol-schemas.ts). Run after changing them:
//   npx tsx scripts/write-schemas.ts
// A unit test (libs/amqp/test/protocol-schemas.test.ts) fails while the files differ.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { protocolSchemaFiles } from '@warren/amqp';

for (const [file, schema] of Object.entries(protocolSchemaFiles)) {
  writeFileSync(join(__dirname, '..', 'docs', 'schemas', file), `${JSON.stringify(schema, null, 2)}\n`);
  process.stdout.write(`docs/schemas/${file}\n`);
}
