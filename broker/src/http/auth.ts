import { createHash, timingSafeEqual } from 'node:crypto';

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
  const digests = tokens.map(digest);
  return (authorization) => {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (!match?.[1]) return false;
    const presented = digest(match[1]);
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, presented) || ok;
    return ok;
  };
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
