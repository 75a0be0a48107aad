// Compile-time tests: a fixture file of right and wrong uses, each wrong one under
// `// @ts-expect-error`, compiled with the project's compiler options twice. As written it must
// compile cleanly (every directive is used); with the directives removed, exactly the lines they
// guarded must fail, so each wrong use is shown to be a compile error of its own.
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '..', '..');
const directive = /^\s*\/\/ @ts-expect-error\b/;
/** Library declarations parsed once for every compilation in the test run. */
const parsedFiles = new Map<string, ts.SourceFile>();

function compilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
  if (parsed === undefined) throw new Error('tsconfig.json did not parse');
  return { ...parsed.options, noEmit: true };
}

/** The 1-based lines of `fixture` with an error, and the messages, when it reads `text`. */
function errorLines(fixture: string, text: string): { lines: number[]; messages: string[] } {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, fresh) => {
    if (path.resolve(name) === fixture) return ts.createSourceFile(name, text, language, true);
    const cached = parsedFiles.get(name) ?? getSourceFile(name, language, onError, fresh);
    if (cached !== undefined) parsedFiles.set(name, cached);
    return cached;
  };
  const program = ts.createProgram({ rootNames: [fixture], options, host });
  const diagnostics = ts.getPreEmitDiagnostics(program).filter((d) => d.file !== undefined && path.resolve(d.file.fileName) === fixture);
  return {
    lines: [...new Set(diagnostics.map((d) => (d.file as ts.SourceFile).getLineAndCharacterOfPosition(d.start ?? 0).line + 1))].sort((a, b) => a - b),
    messages: diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  };
}

/** A fixture read once: its text, the lines its directives guard, and its two compilations. */
export function typeFixture(fixture: string): { guarded: number[]; asWritten: () => { lines: number[]; messages: string[] }; withoutDirectives: () => number[] } {
  const source = ts.sys.readFile(fixture) ?? '';
  const lines = source.split('\n');
  return {
    guarded: lines.flatMap((line, i) => (directive.test(line) ? [i + 2] : [])),
    asWritten: () => errorLines(fixture, source),
    withoutDirectives: () => errorLines(fixture, lines.map((line) => (directive.test(line) ? '//' : line)).join('\n')).lines,
  };
}

/**
 * The three tests every type fixture gets: it guards at least `minGuarded` wrong uses, compiles as
 * written, and fails on exactly the guarded lines once the directives are removed.
 *
 * @example
 * describeTypeFixture('defineMethod types (compile-time safety)', path.join(__dirname, 'types/define-method.fixture.ts'), {
 *   minGuarded: 9, guards: 'the wrong params uses and wrong results',
 * });
 */
export function describeTypeFixture(title: string, file: string, o: { readonly minGuarded: number; readonly guards: string }): void {
  const fixture = typeFixture(file);
  describe(title, () => {
    it(`guards at least ${o.guards} of the fixture`, () => {
      expect(fixture.guarded.length).toBeGreaterThanOrEqual(o.minGuarded);
    });

    it('compiles the fixture as written: the right uses type-check and every @ts-expect-error is needed', () => {
      expect(fixture.asWritten()).toEqual({ lines: [], messages: [] });
    }, 60_000);

    it('fails on exactly the guarded lines once the directives are removed', () => {
      expect(fixture.withoutDirectives()).toEqual(fixture.guarded);
    }, 60_000);
  });
}
