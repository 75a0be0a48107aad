// The type test of schemas as code: test/types/define-method.fixture.ts compiled as written
// (clean) and without its @ts-expect-error directives (fails on exactly the guarded lines), so
// each wrong params use and wrong result is shown to be a compile error (test/support/type-fixture.ts).
import path from 'node:path';
import { describeTypeFixture } from '../../../test/support/type-fixture';

describeTypeFixture('defineMethod types (compile-time safety)', path.join(__dirname, 'types/define-method.fixture.ts'), {
  minGuarded: 9,
  guards: 'the wrong params uses and wrong results',
});
