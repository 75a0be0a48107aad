export { definedOnly, resolveOptions, isIntIn, isPositiveInt, checkInt, checkPositiveInts, type IntRange } from './options';
export type { EnvName } from './env-schema';
export { EnvError, envGiven, envValue, type Env } from './env-read';
