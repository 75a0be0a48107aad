import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Checks `Authorization: Bearer <token>` against the configured tokens.
 * Tokens are compared as SHA-256 digests with timingSafeEqual, and every
 * token is compared every time, so neither the length nor the position of
 * a match leaks through timing.
 *
 * @example
 * const ok = bearerChecker(['s3cret']);
 * ok('Bearer s3cret'); // true
 */
export function bearerChecker(tokens: readonly string[]): (authorization: string | undefined) => boolean {
  const match = bearerMatcher(tokens);
  return (authorization) => match(authorization) !== undefined;
}

/**
 * Like {@link bearerChecker}, but tells which configured token was presented
 * (its index in `tokens`), so per-token limits can key on it without keeping
 * the token itself; undefined when none matches.
 *
 * @example
 * bearerMatcher(['a', 'b'])('Bearer b'); // 1
 */
export function bearerMatcher(tokens: readonly string[]): (authorization: string | undefined) => number | undefined {
  const digests = tokens.map(digest);
  return (authorization) => {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (!match?.[1]) return undefined;
    const presented = digest(match[1]);
    let found: number | undefined;
    digests.forEach((d, i) => {
      if (timingSafeEqual(d, presented) && found === undefined) found = i;
    });
    return found;
  };
}

function digest(token: string): Buffer {
  // The one-shot hash: half what a Hash object costs, on every request.
  return hash('sha256', token, 'buffer');
}
