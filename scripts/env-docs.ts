// Writes the configuration tables of docs/configuration.md from the environment
// schema (libs/config/src/env-schema.ts). Run after changing a variable:
//   npx tsx scripts/env-docs.ts
// test/unit/env-docs.test.ts fails while the committed file is behind the schema.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { withEnvDocs } from '../libs/config/src/env-docs';

export const configurationDoc = path.join(__dirname, '..', 'docs', 'configuration.md');

if (require.main === module) {
  const before = readFileSync(configurationDoc, 'utf8');
  const after = withEnvDocs(before);
  if (after !== before) writeFileSync(configurationDoc, after);
  process.stdout.write(`${path.relative(process.cwd(), configurationDoc)}: ${after === before ? 'up to date' : 'written'}\n`);
}
