/** What earlier runs of a call left of one of its effects, as this run starts it. */
export type EffectStart =
  /** No run has started it: this run does (the ledger marked it started). */
  | { readonly kind: 'run' }
  /** An earlier run finished it: `json` is its stored result ('' for undefined). */
  | { readonly kind: 'done'; readonly json: string }
  /** An earlier run started it and died before storing its result: whether it took effect is unknown. */
  | { readonly kind: 'interrupted' };

/**
 * Where `ctx.once` keeps the effects of one run of a call, for the runs after
 * it (the tracker provides one per tracked run: Redis, with the call's TTL).
 */
export interface EffectLedger {
  /** Marks effect `name` started by this run, unless an earlier run left something of it. */
  start(name: string): Promise<EffectStart>;
  /** Stores its result; the first stored result wins. */
  complete(name: string, json: string): Promise<void>;
  /** `fn` threw: drops this run's start mark, so a later try may run it again. */
  forget(name: string): Promise<void>;
}
