import { envSchema, type EnvName } from './env-schema';
import type { EnvValue } from './env-var';

/** An environment to read from: mains pass `process.env` (only they read it), tests a plain object. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * A variable whose value does not parse. A RangeError, as option errors are; `variable` names it
 * for code, and the message for people: `PREFETCH must be a positive integer, got "lots"`.
 */
export class EnvError extends RangeError {
  readonly code = 'WARREN_BAD_ENV';
  constructor(readonly variable: string, message: string) {
    super(message);
    this.name = 'EnvError';
  }
}

/**
 * The variable as given, parsed; `undefined` when unset or empty (blanks around are ignored), whatever its default.
 * Throws an {@link EnvError} naming it when it does not parse.
 *
 * @example envGiven({ AMQP_URL: 'amqp://a, amqp://b' }, 'AMQP_URL') // ['amqp://a', 'amqp://b']
 */
export function envGiven<N extends EnvName>(env: Env, name: N): Exclude<EnvValue<(typeof envSchema)[N]>, undefined> | undefined {
  const kind = envSchema[name].kind;
  const raw = env[name];
  if (raw === undefined) return undefined;
  const input = kind.keepEmpty ? raw : raw.trim();
  if (input === '' && !kind.keepEmpty) return undefined;
  const parsed = kind.schema.safeParse(input);
  if (parsed.success) return parsed.data as Exclude<EnvValue<(typeof envSchema)[N]>, undefined>;
  const problem = parsed.error.issues[0]?.message ?? 'is malformed';
  throw new EnvError(name, kind.secret ? `${name} ${problem}` : `${name} ${problem}, got ${JSON.stringify(raw)}`);
}

/**
 * The variable parsed, or its schema default when unset (`undefined` for variables without one).
 *
 * @example envValue({}, 'WARREN_NAMESPACE') // 'warren'
 */
export function envValue<N extends EnvName>(env: Env, name: N): EnvValue<(typeof envSchema)[N]> {
  const given = envGiven(env, name);
  return (given === undefined ? envSchema[name].default : given) as EnvValue<(typeof envSchema)[N]>;
}
