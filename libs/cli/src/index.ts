/**
 * @warren/cli — the `warren` command-line tool (bin/warren.js). See
 * docs/cli.md for every command, the environment it reads and its exit codes.
 */
export { run, main, buildProgram, resolveSettings, cliDefaults } from './program';
export { parseParams, parseWord, parseId } from './params';
export { percentile, type BenchReport } from './commands/bench';
export { ExitCode, CliError, UsageError, UnreachableError, showError, type ExitCodeValue, type ShownError } from './errors';
export type { Io, Settings } from './session';
export { runRepl, type ReplOptions } from './repl/shell';
export { readProjectConfig, parseProjectConfig, projectConfigFile, type ProjectConfig, type ProjectService, type ProjectConfigResult } from './project-config';
