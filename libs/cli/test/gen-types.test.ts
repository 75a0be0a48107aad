// The type test of the generated client: test/types/gen-client.fixture.ts uses the committed
// examples/generated/warren-api.ts; it compiles as written, and each wrong params shape or wrong
// use of a result under `@ts-expect-error` fails on its own line (test/support/type-fixture.ts).
import path from 'node:path';
import { describeTypeFixture } from '../../../test/support/type-fixture';

describeTypeFixture('the generated TypeScript client (compile-time safety)', path.join(__dirname, 'types/gen-client.fixture.ts'), {
  minGuarded: 14,
  guards: 'wrong params shapes and wrong result uses',
});
