// The type test of schemas as code: test/types/define-method.fixture.ts compiled as written
// (clean) and without its @ts-expect-error directives (fails on exactly the guarded lines), so
// each wrong params use and wrong result is shown to be a compile error (test/support/type-fixture.ts).
import path from 'node:path';
import { typeFixture } from '../../../test/support/type-fixture';

const fixture = typeFixture(path.join(__dirname, 'types/define-method.fixture.ts'));

describe('defineMethod types (compile-time safety)', () => {
  it('guards at least the wrong params uses and wrong results of the fixture', () => {
    expect(fixture.guarded.length).toBeGreaterThanOrEqual(9);
  });

  it('compiles the fixture as written: the right uses type-check and every @ts-expect-error is needed', () => {
    expect(fixture.asWritten()).toEqual({ lines: [], messages: [] });
  }, 60_000);

  it('fails on exactly the guarded lines once the directives are removed', () => {
    expect(fixture.withoutDirectives()).toEqual(fixture.guarded);
  }, 60_000);
});
