// The type test of the generated client: test/types/gen-client.fixture.ts uses the committed
// examples/generated/warren-api.ts; it compiles as written, and each wrong params shape or wrong
// use of a result under `@ts-expect-error` fails on its own line (test/support/type-fixture.ts).
import path from 'node:path';
import { typeFixture } from '../../../test/support/type-fixture';

const fixture = typeFixture(path.join(__dirname, 'types/gen-client.fixture.ts'));

describe('the generated TypeScript client (compile-time safety)', () => {
  it('guards wrong params shapes and wrong result uses', () => {
    expect(fixture.guarded.length).toBeGreaterThanOrEqual(14);
  });

  it('compiles the fixture as written: the right uses type-check and every @ts-expect-error is needed', () => {
    expect(fixture.asWritten()).toEqual({ lines: [], messages: [] });
  }, 60_000);

  it('fails on exactly the guarded lines once the directives are removed', () => {
    expect(fixture.withoutDirectives()).toEqual(fixture.guarded);
  }, 60_000);
});
