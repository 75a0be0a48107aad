import type { EnvKind } from './env-kinds';

/** Who reads a variable: the broker, every service, one example service, or the `warren` CLI. */
export type EnvReader = 'broker' | 'services' | 'audit' | 'jobs' | 'cli';

/** One environment variable: its kind, its default, what it means and who reads it. */
export interface EnvVar<T, D extends T | undefined> {
  readonly kind: EnvKind<T>;
  /** The value when unset; `undefined` when the reader decides (or when unset means "off"). */
  readonly default: D;
  /** The default as the docs say it, when it is not one fixed value (per service, "the namespace"). @default the default, or "unset" */
  readonly defaultText: string | undefined;
  /** One line for the docs' table (markdown). */
  readonly description: string;
  readonly readers: readonly EnvReader[];
}

/** What a variable reads as: its value, or `undefined` when unset and without a default. */
export type EnvValue<V> = V extends EnvVar<infer T, infer D> ? T | D : never;

interface VarSpec<D> {
  readonly default?: D;
  readonly defaultText?: string;
  readonly description: string;
  readonly readers: readonly EnvReader[];
}

/**
 * Declares one variable of the schema (env-schema.ts).
 *
 * @example variable(positiveInt, { default: 15_000, description: 'Shutdown bound', readers: ['services'] })
 */
export function variable<T, D extends T | undefined = undefined>(kind: EnvKind<T>, spec: VarSpec<D>): EnvVar<T, D> {
  return { kind, default: spec.default as D, defaultText: spec.defaultText, description: spec.description, readers: spec.readers };
}
