import { isLocalError, wireErrorOf, type JsonValue, type LocalErrorCodeValue } from '@warren/jsonrpc';

/**
 * Exit codes of the `warren` command (docs/cli.md has the table):
 * 0 success; 1 an error answer (a JSON-RPC error, or a client's local
 * failure such as RPC_TIMEOUT, shown as its -32001); 2 bad usage; 3 RabbitMQ, Redis or the
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

/** What an error looks like on the command line: a code (numeric for JSON-RPC, a string for the CLI's own), message, data. */
export interface ShownError {
  readonly code: number | string;
  readonly message: string;
  readonly data?: JsonValue;
  /** The client's local code when the failure was on this side (`code` is then its wire code, as docs/cli.md promises). */
  readonly local?: LocalErrorCodeValue;
  readonly exitCode: ExitCodeValue;
}

export function showError(err: unknown): ShownError {
  // A client's local failure is shown as the wire error it maps to: the codes and exit codes stay the documented ones.
  const wire = wireErrorOf(err);
  if (wire) return { code: wire.code, message: wire.message, ...(wire.data === undefined ? {} : { data: wire.data }), ...(isLocalError(err) ? { local: err.code } : {}), exitCode: ExitCode.error };
  if (err instanceof CliError) return { code: err.code, message: err.message, exitCode: err.exitCode };
  const message = err instanceof Error ? err.message : String(err);
  const code = typeof (err as { code?: unknown } | null)?.code === 'string' ? (err as { code: string }).code : 'CLI_FAILED';
  return { code, message, exitCode: ExitCode.error };
}
