import { InvalidArgumentError } from 'commander';
import type { ExitCodeValue } from './errors';
import type { Session } from './session';

/** Wraps a command's work in a session (errors reported, exit code recorded, connections closed): program.ts's `act`. */
export type Act = <A extends unknown[]>(work: (s: Session, ...args: A) => Promise<ExitCodeValue>) => (...args: A) => Promise<void>;

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a whole number');
  return n;
}
