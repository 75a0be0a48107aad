import { JsonRpcError, type JsonValue } from '@warren/jsonrpc';

/**
 * Exit codes of the `warren` command (docs/cli.md has the table):
 * 0 success; 1 an error answer (a JSON-RPC error, local ones such as
 * -32001 Deadline exceeded included); 2 bad usage; 3 RabbitMQ, Redis or the
 * gateway could not be reached.
 */
export const ExitCode = { ok: 0, error: 1, usage: 2, unreachable: 3 } as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Local errors of the CLI: a string code (never sent anywhere) and the exit code it leads to. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: ExitCodeValue,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class UsageError extends CliError {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super('CLI_USAGE', message, ExitCode.usage);
  }
}

export class UnreachableError extends CliError {
  override readonly name = 'UnreachableError';
  constructor(what: string, cause: unknown) {
    super('CLI_UNREACHABLE', `cannot reach ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, ExitCode.unreachable, { cause });
  }
}

/** What an error looks like on the command line: a code (numeric for JSON-RPC, a string for local ones), message, data. */
export interface ShownError {
  readonly code: number | string;
  readonly message: string;
  readonly data?: JsonValue;
  readonly exitCode: ExitCodeValue;
}

export function showError(err: unknown): ShownError {
  if (err instanceof JsonRpcError) return { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }), exitCode: ExitCode.error };
  if (err instanceof CliError) return { code: err.code, message: err.message, exitCode: err.exitCode };
  const message = err instanceof Error ? err.message : String(err);
  const code = typeof (err as { code?: unknown } | null)?.code === 'string' ? (err as { code: string }).code : 'CLI_FAILED';
  return { code, message, exitCode: ExitCode.error };
}
