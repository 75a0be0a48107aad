import { EnvError } from '@warren/config';

/** What reading a main's settings came to: the settings, or the one line to print before exiting 1. */
export type MainSettings<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly line: string };

/**
 * Runs a main's settings reader (readServiceEnv and the service's own). A variable that does not parse
 * (an {@link EnvError}: `AMQP_URL=http://x`, `LOG_LEVEL=verbose`) becomes one line naming it, with no
 * stack, for the main to print before it exits 1, as the broker does: a person's mistake, not a bug.
 * Anything else the reader throws is a bug and is thrown on.
 *
 * @example
 * const settings = readMainSettings('billing', () => readServiceEnv(process.env, billingDefaults));
 * if (!settings.ok) {
 *   process.stderr.write(settings.line);
 *   process.exit(1);
 * }
 * const config = settings.value;
 */
export function readMainSettings<T>(name: string, read: () => T): MainSettings<T> {
  try {
    return { ok: true, value: read() };
  } catch (err) {
    if (!(err instanceof EnvError)) throw err;
    return { ok: false, line: `${name} failed to start: ${err.message}\n` };
  }
}
