import { checkPositiveInts, definedOnly, resolveOptions } from '@warren/config';
/** Bounds on what the decoder accepts; each has a documented default. */
export interface DecodeLimits {
  /** Largest payload in bytes (UTF-8). @default 1048576 (1 MiB) */
  readonly maxBytes?: number;
  /** Deepest nesting of arrays/objects, the batch array included. @default 64 */
  readonly maxDepth?: number;
  /** Most items in one batch. @default 1000 */
  readonly maxBatch?: number;
}

export type ResolvedDecodeLimits = Required<DecodeLimits>;

export const defaultDecodeLimits: ResolvedDecodeLimits = { maxBytes: 1024 * 1024, maxDepth: 64, maxBatch: 1000 };

/** Fills in defaults and names the bad field, so a misconfiguration fails at start-up rather than on the first message. */
export function resolveDecodeLimits(limits: DecodeLimits = {}): ResolvedDecodeLimits {
  const resolved = resolveOptions(defaultDecodeLimits, limits);
  checkPositiveInts('DecodeLimits', resolved, ['maxBytes', 'maxDepth', 'maxBatch']);
  return resolved;
}

/** Kept here for the packages that import it from @warren/jsonrpc; it lives in the options kernel. */
export { definedOnly };
