// Redis stream ids (`<ms>-<seq>`), as the history streams (keys.ts) number their entries.

/** The milliseconds of a stream id. */
export function idMs(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/** Orders stream ids (`<ms>-<seq>`) as Redis does. */
export function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}
