// The type test of schemas as code: compiles test/types/define-method.fixture.ts with the
// project's compiler options twice. As written it must compile cleanly (every `@ts-expect-error`
// is used); with the directives removed, exactly the lines they guarded must fail, so each wrong
// params use and wrong result is shown to be a compile error of its own.
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '../../..');
const fixture = path.join(__dirname, 'types/define-method.fixture.ts');
const directive = /^\s*\/\/ @ts-expect-error\b/;

function compilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
  if (parsed === undefined) throw new Error('tsconfig.json did not parse');
  return { ...parsed.options, noEmit: true };
}

const parsedFiles = new Map<string, ts.SourceFile>();

/** The 1-based lines with an error when the fixture reads `text`. */
function errorLines(text: string): { lines: number[]; messages: string[] } {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, fresh) => {
    if (path.resolve(name) === fixture) return ts.createSourceFile(name, text, language, true);
    // The libraries' declarations are parsed once for both compilations.
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

const source = ts.sys.readFile(fixture) ?? '';
const lines = source.split('\n');
const guarded = lines.flatMap((line, i) => (directive.test(line) ? [i + 2] : []));

describe('defineMethod types (compile-time safety)', () => {
  it('guards at least the wrong params uses and wrong results of the fixture', () => {
    expect(guarded.length).toBeGreaterThanOrEqual(9);
  });

  it('compiles the fixture as written: the right uses type-check and every @ts-expect-error is needed', () => {
    expect(errorLines(source)).toEqual({ lines: [], messages: [] });
  }, 60_000);

  it('fails on exactly the guarded lines once the directives are removed', () => {
    const stripped = lines.map((line) => (directive.test(line) ? '//' : line)).join('\n');
    expect(errorLines(stripped).lines).toEqual(guarded);
  }, 60_000);
});
