// docs/configuration.md's tables are generated from the environment schema: this fails when a
// variable changed and `npx tsx scripts/env-docs.ts` was not run (as `warren gen --check` does for examples/generated).
import { readFileSync } from 'node:fs';
import { withEnvDocs } from '../../libs/config/src/env-docs';
import { configurationDoc } from '../../scripts/env-docs';

it('docs/configuration.md holds the tables the environment schema gives (else run: npx tsx scripts/env-docs.ts)', () => {
  const doc = readFileSync(configurationDoc, 'utf8');
  expect(withEnvDocs(doc)).toBe(doc);
});
